"""Entry points: waiting in the main thread until SIGTERM or SIGINT asks a server to stop.

The kernel hands a process-directed signal to any thread that does not block it, and a server
has many (gRPC's, the watcher's, the syncer's). CPython runs a Python handler only in the main
thread, between bytecodes: a main thread blocked in `Event.wait()` (a lock with no timeout) or in
`accept()` was never woken when another thread took the signal, so `serve` and `watch` now and
then ignored SIGTERM for good (a CI run's `serve` hung past its 30 s stop). So the main thread
sleeps in short steps, and the handler only sets a flag: setting an `Event` from a handler could
deadlock on the lock the interrupted `Event.wait` holds.
"""

from __future__ import annotations

import signal
import time
from types import FrameType

# How often a waiting main thread looks at the flag (and so runs a handler another thread's
# delivery left pending): the most a stop waits for it.
STEP_SECONDS = 0.2


class StopSignals:
    """SIGTERM and SIGINT set a flag that `wait` returns on; install from the main thread."""

    def __init__(self) -> None:
        self._asked = False
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)

    def _on_signal(self, _sig: int, _frame: FrameType | None) -> None:
        self._asked = True

    @property
    def asked(self) -> bool:
        return self._asked

    def wait(self) -> None:
        """Return once a stop was asked for."""
        while not self._asked:
            time.sleep(STEP_SECONDS)
