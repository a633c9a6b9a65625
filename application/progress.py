"""Application: progress of a running sync, forwarded to an optional callback."""

from __future__ import annotations

import threading
from collections.abc import Callable

from memlane.application.reports import SyncProgress


class ProgressTracker:
    """Counts files and embeddings of the current sync and reports each change."""

    def __init__(self) -> None:
        self._callback: Callable[[SyncProgress], None] | None = None
        self._lock = threading.Lock()
        self.phase = "idle"
        self.files_done = 0
        self.files_total = 0
        self.chunks_embedded = 0
        self.vectors_done = 0
        self.vectors_total = 0

    def start(self, callback: Callable[[SyncProgress], None] | None) -> None:
        """Begin a sync reporting to `callback` (None: count silently)."""
        with self._lock:
            self._callback = callback
            self.phase, self.files_done, self.files_total, self.chunks_embedded = "scan", 0, 0, 0
            self.vectors_done = self.vectors_total = 0

    def set_phase(self, phase: str, total: int | None = None) -> None:
        """Enter a phase (scan, index, rebuild, vectors), optionally with a new file total."""
        with self._lock:
            self.phase = phase
            if total is not None:
                self.files_total, self.files_done = total, 0
        self._emit()

    def file_done(self) -> None:
        """Count one file as processed."""
        with self._lock:
            self.files_done += 1
        self._emit()

    def embedded(self, count: int) -> None:
        """Count `count` newly embedded chunks."""
        with self._lock:
            self.chunks_embedded += count
        self._emit()

    def vectors(self, done: int, total: int) -> None:
        """Note the vector backfill's position: `done` of `total` chunks have their vector."""
        with self._lock:
            self.vectors_done, self.vectors_total = done, total
        self._emit()

    def _emit(self) -> None:
        callback = self._callback
        if callback is not None:
            callback(
                SyncProgress(
                    phase=self.phase,
                    files_done=self.files_done,
                    files_total=self.files_total,
                    chunks_embedded=self.chunks_embedded,
                    vectors_done=self.vectors_done,
                    vectors_total=self.vectors_total,
                )
            )
