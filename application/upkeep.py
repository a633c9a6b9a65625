"""Application: keeping the index in line with the files (the indexing family of the facade).

An explicit sync, the scan before a search (`refresh`), and the background triggers (watcher,
interval, debounced requests). What lets a search skip its scan: the watch lease of a live
watcher, or in a long-lived process (the daemon) a change journal over the sources' roots.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

import structlog

from memlane.application.enabled import require_enabled
from memlane.application.ports.change_journal import ChangeJournal
from memlane.application.ports.file_source import FileSource
from memlane.application.ports.watch_lease import LeaseHolder, WatchLease
from memlane.application.reports import SyncProgress, SyncReport
from memlane.application.scheduler import BackgroundSyncer
from memlane.application.sync import SyncService
from memlane.application.sync_failures import SyncVerdicts
from memlane.application.sync_trigger import SyncTrigger
from memlane.application.vector_backfill import SEARCH_BACKFILL_LIMIT
from memlane.domain.config import MemorySettings
from memlane.domain.sources import Source

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

    def confirm(self) -> bool:
        """The holder's answer, asked now: every change that finished before is indexed."""
        return self._lease is not None and self._lease.confirm()


class IndexUpkeep:
    """Sync now, sync before a read, and the background syncer's life."""

    def __init__(
        self,
        *,
        settings: MemorySettings,
        syncing: SyncService,
        background: BackgroundSyncer,
        watcher: IndexWatcher,
        sources: Mapping[Source, FileSource],
        journal: Callable[[list[str]], ChangeJournal] | None = None,
        verdicts: SyncVerdicts,
    ) -> None:
        self._settings = settings
        self._verdicts = verdicts  # each sync's failure, kept for `status`
        self._make_journal = journal  # for a process that watches (`start`)
        self._syncing = syncing
        self._background = background
        self._watcher = watcher
        self._sources = sources
        self._journal: ChangeJournal | None = None
        self._journal_clean: int | None = None  # journal count a completed scan started after
        self._journal_lock = threading.Lock()
        # start and close run one at a time, and nothing starts after a close: a server starts
        # from a thread of its own while its host may already be closing it.
        self._lifecycle = threading.Lock()
        self._closed = False

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
        limit = None if wait_for_vectors else 0
        try:
            return self._verdicts.run(
                trigger,
                lambda: self._syncing.run(
                    trigger,
                    force=force,
                    progress=progress,
                    backfill_limit=limit,
                    allow_mass_delete=allow,
                ),
            )
        finally:
            if not wait_for_vectors:
                # A running worker may be idle, waiting for a request: hand it the missing
                # vectors (those of the files committed before a failure too).
                self._background.backfill()

    def sync_written(self) -> SyncReport:
        """Index a note `memory_write` just wrote, without making the tool call wait long: the
        keyword rows are committed at once, vectors embedded only when few are missing (a
        backlog goes to the background syncer, as after a search), and another process's sync
        of a shared store is not waited for (the report says it was skipped). The note is on
        disk whatever happens; a plain sync waited for every missing vector of the index."""
        require_enabled(self._settings)
        trigger = SyncTrigger.EXPLICIT
        try:
            return self._verdicts.run(
                trigger,
                lambda: self._syncing.run(
                    trigger, backfill_limit=SEARCH_BACKFILL_LIMIT, wait_for_host=False
                ),
            )
        finally:
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
        if self._journal is not None:
            return self._refresh_by_journal(self._journal, trigger, progress)
        if self._watched_and_fresh():
            return None
        return self._scan(trigger, progress)

    def _scan(
        self, trigger: SyncTrigger, progress: Callable[[SyncProgress], None] | None
    ) -> SyncReport | None:
        """The search's sync, its failure recorded for `status`."""
        return self._verdicts.run(
            trigger,
            lambda: self._syncing.run_unless_read_only(
                trigger, progress, SEARCH_BACKFILL_LIMIT, wait_for_host=False
            ),
        )

    def track_changes(self, make_journal: Callable[[list[str]], ChangeJournal]) -> None:
        """Decide `refresh`'s scan by a change journal over the sources' roots (a long-lived
        process: the daemon) instead of by the watch lease, whose holder may not have read the
        newest change yet. The first refresh after this scans; `close` closes the journal."""
        roots = [root for source in self._sources.values() for root in source.watch_roots()]
        journal = make_journal(roots)
        with self._journal_lock:
            old, self._journal, self._journal_clean = self._journal, journal, None
        if old is not None:
            old.close()
        # A background sync (the watcher's, the interval's) scans too: a search after it and
        # before any new change needs none.
        self._background.on_scans(journal.seen, self._scanned)

    def _refresh_by_journal(
        self,
        journal: ChangeJournal,
        trigger: SyncTrigger,
        progress: Callable[[SyncProgress], None] | None,
    ) -> SyncReport | None:
        """Skip the scan when no change was seen since a completed scan began; else scan."""
        seen = journal.seen()  # every change that finished before this request is counted
        with self._journal_lock:
            clean = self._journal_clean
        if seen is not None and seen == clean and self._syncing.has_index():
            log.debug("sync_skipped", reason="no change since the last scan", changes=seen)
            return None
        report = self._scan(trigger, progress)
        self._scanned(seen, report)
        return report

    def _scanned(self, seen: int | None, report: SyncReport | None) -> None:
        """A sync whose scan began after the journal had counted `seen` changes ended with
        `report`: with nothing held back, every one of those changes is in the index."""
        if seen is not None and report is not None and report.files_held_back == 0:
            with self._journal_lock:
                self._journal_clean = max(seen, self._journal_clean or 0)

    def _watched_and_fresh(self) -> bool:
        """Whether a live watcher of this very index says every change it saw is indexed
        (the scan before a search is then skipped: a second per 50,000 notes here).

        Its last word (`fresh` in the lease) can predate a change that just finished (its
        watcher reports changes late), so it is asked now, and answers from its change
        journal after the question arrived (`_fresh_by_journal` in that process)."""
        holder = self._watcher.holder()
        if holder is None or not holder.fresh or not self._syncing.has_index():
            return False
        if not self._watcher.confirm():
            log.debug("sync_not_skipped", reason="the watcher did not confirm", watcher=holder.pid)
            return False
        log.debug("sync_skipped", reason="a watcher keeps the index fresh", watcher=holder.pid)
        return True

    def mark_dirty(self) -> None:
        self._syncing.mark_dirty()

    def request_sync(self, trigger: SyncTrigger) -> None:
        self._background.request(trigger)

    def start(self, *, watch: bool | None) -> None:
        with self._lifecycle:
            if self._settings.enabled and not self._closed:
                self._start(watch)

    def _start(self, watch: bool | None) -> None:
        watching = self._settings.sync.watch if watch is None else watch
        if watching and self._make_journal is not None and self._journal is None:
            # A watching process decides its own scans by the journal, and answers from it
            # the other processes that would skip theirs on its lease.
            self.track_changes(self._make_journal)
        self._background.start(watch=watch)
        self._background.answer_readers(self._fresh_by_journal)

    def _fresh_by_journal(self) -> bool:
        """Whether every change that finished before this call is indexed: the journal has
        counted no change since a completed scan began (False without a journal)."""
        journal = self._journal
        if journal is None:
            return False
        seen = journal.seen()
        with self._journal_lock:
            clean = self._journal_clean
        return seen is not None and seen == clean and self._syncing.has_index()

    def close(self) -> None:
        """Stop the background work (it reads the journal), close the journal, release the
        store."""
        with self._lifecycle:
            self._closed = True
        self._background.stop()
        with self._journal_lock:
            journal, self._journal = self._journal, None
        if journal is not None:
            journal.close()
        self._syncing.close_store()
