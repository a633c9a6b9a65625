"""Application: keeping the index in line with the files (the indexing family of the facade).

An explicit sync, the scan before a search (`refresh`), and the background triggers (watcher,
interval, debounced requests) with the watch lease that lets a searcher skip its scan.
"""

from __future__ import annotations

from collections.abc import Callable

import structlog

from memlane.application.enabled import require_enabled
from memlane.application.ports.watch_lease import LeaseHolder, WatchLease
from memlane.application.reports import SyncProgress, SyncReport
from memlane.application.scheduler import BackgroundSyncer
from memlane.application.sync import SyncService
from memlane.application.sync_trigger import SyncTrigger
from memlane.application.vector_backfill import SEARCH_BACKFILL_LIMIT
from memlane.domain.config import MemorySettings

log = structlog.get_logger()


class IndexWatcher:
    """The live process watching this very index (same workspace, store and sources), as its
    watch lease tells; `lease` None: no lease, nobody is trusted to keep the index fresh."""

    def __init__(self, lease: WatchLease | None = None, scope: str = "") -> None:
        self._lease = lease
        self._scope = scope

    def holder(self) -> LeaseHolder | None:
        holder = None if self._lease is None else self._lease.holder()
        return holder if holder is not None and holder.scope == self._scope else None


class IndexUpkeep:
    """Sync now, sync before a read, and the background syncer's life."""

    def __init__(
        self,
        *,
        settings: MemorySettings,
        syncing: SyncService,
        background: BackgroundSyncer,
        watcher: IndexWatcher,
    ) -> None:
        self._settings = settings
        self._syncing = syncing
        self._background = background
        self._watcher = watcher

    def sync(
        self,
        *,
        force: bool,
        trigger: SyncTrigger,
        progress: Callable[[SyncProgress], None] | None,
        wait_for_vectors: bool,
        allow_mass_delete: bool,
    ) -> SyncReport:
        """See `MemoryManager.sync`."""
        require_enabled(self._settings)
        allow = allow_mass_delete
        if wait_for_vectors:
            return self._syncing.run(
                trigger, force=force, progress=progress, allow_mass_delete=allow
            )
        try:
            return self._syncing.run(
                trigger, force=force, progress=progress, backfill_limit=0, allow_mass_delete=allow
            )
        finally:
            # A running worker may be idle, waiting for a request: hand it the missing vectors
            # (those of the files committed before a failure too).
            self._background.backfill()

    def refresh(
        self, trigger: SyncTrigger, progress: Callable[[SyncProgress], None] | None
    ) -> SyncReport | None:
        """Sync before reading; a read-only index is searched as it is (None, said once).

        A fresh process (the CLI) cannot know what changed since the last sync, so this scans
        the sources; with `sync.onSearch: false` an existing index is searched as it is (None:
        the user keeps it fresh another way, a watcher or `index`), while an index that was
        never built still gets its first sync.
        Missing vectors are embedded here only when few are missing (SEARCH_BACKFILL_LIMIT):
        a search must not wait for a large backfill; it answers with a warning saying how far
        the vectors are.
        """
        require_enabled(self._settings)
        if not self._settings.sync.on_search and self._syncing.has_index():
            return None
        if self._watched_and_fresh():
            return None
        return self._syncing.run_unless_read_only(trigger, progress, SEARCH_BACKFILL_LIMIT)

    def _watched_and_fresh(self) -> bool:
        """Whether a live watcher of this very index says every change it saw is indexed
        (the scan before a search is then skipped: a second per 50,000 notes here)."""
        holder = self._watcher.holder()
        if holder is None or not holder.fresh or not self._syncing.has_index():
            return False
        log.debug("sync_skipped", reason="a watcher keeps the index fresh", watcher=holder.pid)
        return True

    def mark_dirty(self) -> None:
        self._syncing.mark_dirty()

    def request_sync(self, trigger: SyncTrigger) -> None:
        self._background.request(trigger)

    def start(self, *, watch: bool | None) -> None:
        if self._settings.enabled:
            self._background.start(watch=watch)

    def close(self) -> None:
        """Stop the background work, then release the store."""
        self._background.stop()
        self._syncing.close_store()
