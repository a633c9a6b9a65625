"""Adapter helper: make the calling thread's BLAS products single-threaded (OpenBLAS >= 0.3.27).

The numpy forward pass runs its own worker threads, one per core, each over a share of the
batch's texts. If OpenBLAS also split every product over the cores, the two levels would fight:
on this 2-core machine shared with other jobs, BLAS's own threads made a batch 3x slower, since
each small product waits at a barrier for a thread the scheduler has put aside. OpenBLAS's
`openblas_set_num_threads_local` limits the calling thread only, so the rest of the process (the
vector scan's products) keeps every core. Found in the OpenBLAS the process has loaded (numpy's
wheel bundles one); without it the caller is told and runs one worker.
"""

from __future__ import annotations

import ctypes
import threading
from functools import cache
from pathlib import Path

_local = threading.local()


@cache
def _setter() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    import numpy  # noqa: F401  - loads the OpenBLAS numpy was built with

    try:
        with Path("/proc/self/maps").open(encoding="utf-8", errors="replace") as maps:
            paths = {line.split()[-1] for line in maps if "openblas" in line.lower()}
    except OSError:
        return None
    for path in sorted(paths):
        try:
            function = ctypes.CDLL(path).openblas_set_num_threads_local
        except (OSError, AttributeError):
            continue
        function.argtypes = [ctypes.c_int]
        function.restype = ctypes.c_int
        return function
    return None


def available() -> bool:
    return _setter() is not None


def use_one_blas_thread() -> bool:
    """Limit this thread's BLAS calls to one thread; False when this BLAS cannot."""
    if getattr(_local, "done", False):
        return True
    setter = _setter()
    if setter is None:
        return False
    setter(1)
    _local.done = True
    return True
