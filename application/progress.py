"""Application: progress of a running sync, forwarded to an optional callback, else logged.

A sync with a watcher (the CLI passes a callback that draws on the terminal, or prints plain
lines to a pipe) reports every step to it. A sync nobody watches (the first search through the
Python API, the MCP server or the gRPC server, a background sync) would otherwise be silent for
as long as it takes to embed a large workspace; it writes a `sync_progress` log line at most
every `log_every` seconds instead (files done/total, chunks embedded, rate, ETA), on the
injected clock. A sync shorter than that writes none.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import structlog

from memlane.application.ports.clock import Clock
from memlane.application.reports import SyncProgress

log = structlog.get_logger()

DEFAULT_LOG_EVERY_SECONDS = 10.0


class ProgressLog:
    """A progress callback writing a log line at most every `every` seconds (0: every step)."""

    def __init__(self, clock: Clock, every: float) -> None:
        self._clock = clock
        self._every = every
        self._started = clock.monotonic()
        self._last = self._started
        self._lock = threading.Lock()

    def __call__(self, p: SyncProgress) -> None:
        now = self._clock.monotonic()
        with self._lock:
            if p.phase == "idle" or now - self._last < self._every:
                return
            self._last = now
        elapsed = now - self._started
        eta = None
        if p.files_total and p.files_done and p.files_done < p.files_total:
            eta = round(elapsed / p.files_done * (p.files_total - p.files_done), 1)
        # Logged as a warning: the default level of every entry point is `warning` (a library
        # must stay quiet), and a sync long enough to get here is what a host has to see.
        log.warning(
            "sync_progress",
            phase=p.phase,
            files_done=p.files_done,
            files_total=p.files_total,
            chunks_embedded=p.chunks_embedded,
            chunks_per_s=round(p.chunks_embedded / elapsed, 2) if elapsed > 0 else None,
            elapsed_s=round(elapsed, 1),
            eta_s=eta,
        )


class ProgressTracker:
    """Counts files and embeddings of the current sync and reports each change.

    With a `clock` and `log_every` >= 0, a sync started without a callback reports to a
    `ProgressLog` (see the module docstring); without a clock it counts silently.
    """

    def __init__(
        self, clock: Clock | None = None, log_every: float | None = DEFAULT_LOG_EVERY_SECONDS
    ) -> None:
        self._callback: Callable[[SyncProgress], None] | None = None
        self._clock = clock
        self._log_every = log_every
        self._lock = threading.Lock()
        self.phase = "idle"
        self.files_done = 0
        self.files_total = 0
        self.chunks_embedded = 0
        self.vectors_done = 0
        self.vectors_total = 0

    def start(self, callback: Callable[[SyncProgress], None] | None) -> None:
        """Begin a sync reporting to `callback` (None: to the log, when one is configured)."""
        if callback is None and self._clock is not None and self._log_every is not None:
            callback = ProgressLog(self._clock, max(0.0, self._log_every))
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
