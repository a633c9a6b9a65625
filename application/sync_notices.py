"""Application: what a process's syncs left for its searches to say.

A sync can end without bringing the index up to date and without failing the search that asked
for it: the store was read-only, the mass-deletion guard refused (#30), another process was
rebuilding the index aside, or syncing a shared store's agent, or a newer memlane built the
index. Each leaves a notice here, which
searches and `status` show until a sync goes through (the read-only and the other-sync ones are
said once each time they happen). Split from the sync use case (sync.py),
which runs the syncs; thread-safe, since searches read while a sync writes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from memlane.application.sync_refusal import SyncRefused
from memlane.application.sync_report import HOST_BUSY, REBUILD_ELSEWHERE


class SyncNotices:
    """The refusal, the read-only state and the skipped-for-a-rebuild mark of one process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._refused: SyncRefused | None = None  # why the last sync stopped, if it did
        self._read_only: str | None = None  # why the store could not be written, once seen
        self._read_only_told = False
        self._rebuild_elsewhere = False  # the last sync was skipped for another's rebuild
        self._host_busy = False  # a search's sync was skipped for another process's sync

    def refused(self, why: SyncRefused) -> None:
        with self._lock:
            self._refused = why

    def went_through(self, *, wrote: bool) -> None:
        """A sync ran: an earlier refusal or rebuild skip is over, and, when it `wrote`, the
        read-only state too (the store was made writable again; should it turn read-only later,
        that is said once more). A sync with nothing to write goes through a read-only store:
        that proves nothing, and the state stays."""
        with self._lock:
            self._refused = None
            self._rebuild_elsewhere = False
            if wrote:
                self._read_only = None
                self._read_only_told = False

    def skipped_for_rebuild(self) -> None:
        with self._lock:
            self._rebuild_elsewhere = True

    def skipped_for_host(self) -> None:
        with self._lock:
            self._host_busy = True

    def take_host_busy_notice(self) -> str | None:
        """The notice of a sync skipped for another process's sync, once (the next search's
        sync may well go through)."""
        with self._lock:
            busy, self._host_busy = self._host_busy, False
        return HOST_BUSY if busy else None

    def found_read_only(self, why: str) -> bool:
        """Note the store read-only; True the first time (the caller logs it then)."""
        with self._lock:
            first = self._read_only is None
            self._read_only = why
        return first

    @property
    def refusal(self) -> str | None:
        return None if self._refused is None else str(self._refused)

    @property
    def refused_by(self) -> SyncRefused | None:
        return self._refused

    @property
    def read_only(self) -> str | None:
        return self._read_only

    def take_read_only_notice(self) -> str | None:
        """The read-only warning, the first time it is asked for after the index was found so."""
        with self._lock:
            if self._read_only is None or self._read_only_told:
                return None
            self._read_only_told = True
            return f"could not sync, searching the index as it is: {self._read_only}"

    def rebuild_notice(self, still_rebuilding: Callable[[], bool]) -> str | None:
        """The search's notice after a sync skipped for another process's rebuild; asked
        again (`still_rebuilding`): it may have been swapped in since."""
        with self._lock:
            seen = self._rebuild_elsewhere
        return REBUILD_ELSEWHERE if seen and still_rebuilding() else None
