"""Application: how many callers hold one shared object, so the last one to let go closes it.

`memlane.open` returns the same live manager to every caller of the same agent, workspace and
settings; one caller's `with` block ending used to close it under the others ("the database
is closed" on their next search).
"""

from __future__ import annotations

import threading


class Holders:
    """A count of holds, one to start with; thread-safe."""

    def __init__(self) -> None:
        self._count = 1
        self._lock = threading.Lock()

    def add(self) -> None:
        with self._lock:
            self._count += 1

    def release(self, *, every: bool = False) -> bool:
        """Let go of one hold (of all with `every`); True when none is left."""
        with self._lock:
            self._count = 0 if every else max(0, self._count - 1)
            return self._count == 0
