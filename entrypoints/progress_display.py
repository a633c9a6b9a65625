"""Entry points: progress of a long sync on stderr (`index`, and the sync before a search).

On a terminal: one line rewritten in place (phase, files, chunks embedded, rate, ETA). Anywhere
else (a pipe, a log file, a service manager): the same text as a plain line every
`MEMLANE_PROGRESS_SECONDS` seconds (default 10), so a long first sync is visibly alive without
flooding a log; a sync shorter than that prints nothing.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Final, TextIO

from memlane.application.reports import SyncProgress

DEFAULT_EVERY_SECONDS: Final = 10.0


def progress_text(p: SyncProgress, elapsed: float) -> str:
    """`index: 120/5000 files, 300 chunks embedded (12.5/s), 0:24 eta 16:16`."""
    rate = f" ({p.chunks_embedded / elapsed:.1f}/s)" if elapsed > 0 and p.chunks_embedded else ""
    eta = ""
    if p.files_total and p.files_done and p.files_done < p.files_total:
        eta = " eta " + _clock(elapsed / p.files_done * (p.files_total - p.files_done))
    return (
        f"{p.phase}: {p.files_done}/{p.files_total} files, {p.chunks_embedded} chunks embedded"
        f"{rate}, {_clock(elapsed)}{eta}"
    )


def _clock(seconds: float) -> str:
    return f"{int(seconds // 60)}:{int(seconds % 60):02d}"


def _every(env: dict[str, str] | os._Environ[str]) -> float:
    try:
        return max(0.0, float(env.get("MEMLANE_PROGRESS_SECONDS", DEFAULT_EVERY_SECONDS)))
    except ValueError:
        return DEFAULT_EVERY_SECONDS


@contextmanager
def sync_progress(stream: TextIO | None = None) -> Iterator[Callable[[SyncProgress], None]]:
    """A progress callback for `MemoryManager.sync` writing to `stream` (default stderr)."""
    out = stream or sys.stderr
    tty = out.isatty()
    every = _every(os.environ)
    started = time.monotonic()
    last_line = started
    shown = False

    def show(p: SyncProgress) -> None:
        nonlocal last_line, shown
        now = time.monotonic()
        if tty:
            out.write(f"\r{progress_text(p, now - started)}   ")
            shown = True
        elif p.phase != "idle" and now - last_line >= every:
            out.write(progress_text(p, now - started) + "\n")
            last_line = now
        out.flush()

    try:
        yield show
    finally:
        if tty and shown:
            out.write("\n")
            out.flush()
