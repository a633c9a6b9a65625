"""Application: the sync use case, everything that happens when the index catches up with files.

In order, under one lock:
1. catch up: handlers first finish whatever the event log holds unprocessed (a crash, a
   failed handler);
2. decide: a full rebuild (forced, no index yet, or the index was built for another model,
   chunking or scope) or an incremental pass;
3. detect: stat every source file against the index's file table and publish the differences
   as events (automatic triggers hold back transcripts that grew less than the thresholds);
4. backfill: give vectors to chunks indexed without them (a rebuild, which commits every
   file's keyword rows first and defers its vectors; a provider that came back, a new model,
   earlier embedding failures), in batches committed one by one, so a kill loses at most one
   batch and the next run resumes where it stopped. A caller that must answer soon (a search,
   a server starting) limits or skips this step and leaves it to `backfill_step`, which the
   background syncer calls between syncs;
5. tidy: prune the embedding cache and compact the event log;
6. record: the per-file problems and, when the index changed, when and why (for `status` in a
   new process).
Steps 1-6 are `sync_pass.SyncPass`; this module runs it one at a time, skips it while another
process does the same work, and keeps what searches read (dirty, the last report, notices).

A sync that finds nothing to do writes nothing (issue #14): every write above happens only
when there is something to write, so a read-only index can still be synced against and searched.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Final

import structlog

from memlane.application.change_detection import ChangeDetector
from memlane.application.embedding_runtime import EmbeddingRuntime
from memlane.application.issues import IssueBoard
from memlane.application.messagebus import MessageBus
from memlane.application.ports.clock import Clock
from memlane.application.ports.event_log import EventLog
from memlane.application.ports.index_store import (
    IndexStore,
    StoreError,
    StoreReadOnly,
    VectorProgress,
    caused_by,
)
from memlane.application.ports.sync_lock import SyncLock
from memlane.application.progress import ProgressTracker
from memlane.application.reports import SyncProgress, SyncReport
from memlane.application.sync_notices import SyncNotices
from memlane.application.sync_pass import SyncPass
from memlane.application.sync_refusal import SyncRefused
from memlane.application.sync_report import (
    host_busy_report,
    rebuild_skipped_report,
    settings_elsewhere_report,
    skipped_report,
)
from memlane.application.sync_trigger import SyncFailed, SyncTrigger
from memlane.application.vector_backfill import BACKFILL_BATCH, VectorBackfill
from memlane.domain.config import MemorySettings
from memlane.domain.index_meta import IndexMeta, reindex_reason

log = structlog.get_logger()

# How long a search waits for this process's running sync or backfill batch before it fills a
# small vector gap itself: a start-up scan or one batch of 32 chunks takes seconds; a sync that
# takes longer is left alone (the search then says how far the vectors are).
GAP_WAIT_SECONDS: Final = 10.0


class SyncService:
    """Runs syncs one at a time and remembers whether the index may be stale."""

    def __init__(
        self,
        *,
        store: IndexStore,
        event_log: EventLog,
        bus: MessageBus,
        detector: ChangeDetector,
        runtime: EmbeddingRuntime,
        wanted_meta: Callable[[], IndexMeta],
        issues: IssueBoard,
        progress: ProgressTracker,
        clock: Clock,
        settings: MemorySettings,
        host_lock: SyncLock | None = None,
        legacy_scope_hash: str = "",
        backfill_batch_size: int = BACKFILL_BATCH,
        workspace: str = "",
    ) -> None:
        self._store = store
        # Set by `close_store`: a running backfill stops after its batch (the rest stays missing).
        self._closing = threading.Event()
        self._vectors = VectorBackfill(
            closing=self._closing.is_set,
            store=store,
            runtime=runtime,
            issues=issues,
            progress=progress,
            wanted_meta=wanted_meta,
            clock=clock,
            announce=bus.publish,
            use_cache=settings.cache.enabled,
            batch=backfill_batch_size,
            pieces=settings.query.piece_weight > 0,
        )
        self._pass = SyncPass(
            store=store,
            event_log=event_log,
            bus=bus,
            detector=detector,
            runtime=runtime,
            vectors=self._vectors,
            wanted_meta=wanted_meta,
            issues=issues,
            progress=progress,
            clock=clock,
            settings=settings,
            legacy_scope_hash=legacy_scope_hash,
            workspace=workspace,
        )
        # Shared stores: one sync of this agent at a time across processes and hosts.
        self._host_lock = host_lock
        self._wanted_meta = wanted_meta
        self._bus = bus
        self._issues = issues
        self._progress = progress
        self._lock = threading.Lock()  # one sync at a time; close waits for the running one
        self._state_lock = threading.Lock()
        # None: this process has not synced yet and knows nothing about the files.
        self._dirty: bool | None = None
        self._noticed = 0  # change notices so far: one during a sync keeps the index dirty
        self._last: SyncReport | None = None
        self._last_at: str | None = None
        self._notices = SyncNotices()
        self._legacy_scope_hash = legacy_scope_hash
        # The meta this process left the index with after its last sync (None before it synced):
        # a different one found by a later automatic sync is another process's settings.
        self._left: IndexMeta | None = None
        self._said_settings: IndexMeta | None = None  # the foreign meta already warned about

    @property
    def dirty(self) -> bool:
        """Whether files may have changed since the last sync (unknown counts as changed)."""
        return self._dirty is not False

    @property
    def dirty_known(self) -> bool | None:
        """`dirty` as this process knows it; None before its first sync or change notice."""
        return self._dirty

    @property
    def last_synced_at(self) -> str | None:
        """When this process's last sync finished (ISO 8601, UTC), None before the first."""
        return self._last_at

    @property
    def read_only(self) -> str | None:
        """Why the index could not be written, if a sync found it read-only."""
        return self._notices.read_only

    @property
    def last_report(self) -> SyncReport | None:
        """The report of the last finished sync, None before the first."""
        return self._last

    def has_index(self) -> bool:
        """Whether a sync ever completed on this index (its IndexMeta is written last)."""
        return self._store.meta() is not None

    def mark_dirty(self) -> None:
        """Note that files changed; the next search or background sync picks it up."""
        with self._state_lock:
            self._dirty, self._noticed = True, self._noticed + 1

    def run(
        self,
        trigger: SyncTrigger,
        *,
        force: bool = False,
        progress: Callable[[SyncProgress], None] | None = None,
        backfill_limit: int | None = None,
        allow_mass_delete: bool = False,
        wait_for_host: bool = True,
    ) -> SyncReport:
        """Bring the index in line with the files; `force` rebuilds it completely (safely).

        The vectors of every chunk are backfilled before it returns, unless more than
        `backfill_limit` are missing (0: never): then the keyword rows are complete, search
        answers, and `backfill_step` (the background syncer) or a later sync embeds the rest.
        Raises SyncFailed when a handler could not commit a change (the rest is done), and
        MassDeletion, before writing anything, when the sync would remove more than
        `sync.maxDeletePercent` of a source's files, unless `allow_mass_delete`, and
        IndexFromNewerMemlane when a newer memlane built the index (unless `force`).
        Without `wait_for_host` (a search's sync), a shared store's agent that another process
        is syncing is not waited for: the sync is skipped and the next search says so.
        """
        with self._lock, self._hold_host(wait=wait_for_host) as held:
            if not held:
                self._notices.skipped_for_host()
                report = host_busy_report(trigger, self._issues.all())
                return self._skipped(trigger, "sync_skipped_other_process_syncing", report)
            elsewhere = self._store.first_index()
            if elsewhere is not None and elsewhere.running_elsewhere:
                done, total = elsewhere.files_done, elsewhere.files_total
                report = skipped_report(trigger, elsewhere, self._issues.all())
                event = "sync_skipped_first_index_elsewhere"
                return self._skipped(trigger, event, report, files_done=done, files_total=total)
            if trigger.automatic and (why := self._settings_changed_elsewhere()) is not None:
                report = settings_elsewhere_report(trigger, self._issues.all(), why)
                return self._skipped(trigger, "sync_skipped_settings_changed_elsewhere", report)
            if not force and self._store.rebuild_elsewhere():
                self._notices.skipped_for_rebuild()
                report = rebuild_skipped_report(trigger, self._issues.all())
                return self._skipped(trigger, "sync_skipped_rebuild_elsewhere", report)
            self._bus.take_failures()  # a failure from before this sync is not this sync's
            noticed = self._noticed
            try:
                report, finished_at = self._pass.run(
                    trigger,
                    force=force,
                    progress=progress,
                    backfill_limit=backfill_limit,
                    allow_mass_delete=allow_mass_delete,
                )
            except SyncRefused as exc:
                self._notices.refused(exc)  # every search says it until a sync goes through
                with self._state_lock:  # behind the files, whatever an earlier sync left known
                    self._dirty = True
                raise
            except Exception as exc:  # whoever ran it (a server's first sync): searches say it
                if caused_by(exc, StoreReadOnly) and self._notices.found_read_only(str(exc)):
                    log.info("store_read_only", error=str(exc))
                raise
            failures = self._bus.take_failures()
            left = self._store.meta()
            with self._state_lock:
                self._dirty = self._noticed != noticed
                self._last = report
                self._last_at = finished_at
                self._left = left
        # A sync that wrote (what it handled or embedded) found the store writable again.
        self._notices.went_through(wrote=report.events_handled > 0 or report.vectors_backfilled > 0)
        if failures:
            with self._state_lock:
                self._dirty = True  # what failed is still to do
            log.error("sync_failed", reason=trigger.value, failures=len(failures))
            raise SyncFailed(failures)
        return report

    def _settings_changed_elsewhere(self) -> str | None:
        """Why not to sync automatically, when another process rebuilt the index with other
        settings (sources, model, chunking) since this one synced it: a watcher and a CLI of
        two configurations rebuilt the index back and forth. A command the user runs (not
        automatic) still rebuilds to its own settings, as asked. Warned once per foreign meta."""
        left = self._left
        if left is None:
            return None
        stored = self._store.meta()
        if stored is None or stored == left:
            return None
        why = reindex_reason(stored, self._wanted_meta(), legacy_scope_hash=self._legacy_scope_hash)
        if why is None:
            return None
        if self._said_settings != stored:
            self._said_settings = stored
            log.warning("sync_skipped_settings_changed_elsewhere", reason=why)
        return why

    def _skipped(
        self, trigger: SyncTrigger, event: str, report: SyncReport, **said: int
    ) -> SyncReport:
        """A sync not run because another process does its work: it writes the first index, or
        rebuilds the index aside, and lists every file (the ones changed meanwhile too), so this
        sync would only do it twice (a rebuild picked up from the log ran twice, holding the
        search for the whole of it). Searches answer from the index as it is; this process has
        not seen the files, so the next sync looks again."""
        log.info(event, reason=trigger.value, **said)
        with self._state_lock:
            self._dirty = True
        return report

    @property
    def rebuild_notice(self) -> str | None:
        """What a search says when its sync was skipped for another process's rebuild."""
        return self._notices.rebuild_notice(self._store.rebuild_elsewhere)

    def take_host_busy_notice(self) -> str | None:
        """What the search says, once, whose sync was skipped for another process's sync."""
        return self._notices.take_host_busy_notice()

    def backfill_step(self, stopping: Callable[[], bool] = lambda: False) -> int:
        """Embed and commit one batch of missing vectors under the sync lock; return how many
        chunks got a vector (0: none missing, no usable provider, or the provider failed, which
        `status` and the runtime's warning then say). `stopping`: see `VectorBackfill.step`."""
        with self._lock, self._hold_host(wait=True):
            if self._first_index_elsewhere():
                return 0  # its writer backfills once its keyword rows are in
            return self._vectors.step(stopping)

    def _first_index_elsewhere(self) -> bool:
        first = self._store.first_index()
        return first is not None and first.running_elsewhere

    def fill_vector_gap(self, limit: int, *, wait: float = GAP_WAIT_SECONDS) -> int:
        """Before a search: embed the missing vectors when at most `limit` are missing (what
        `run` does for the CLI's search), so a server's search, like the CLI's, answers on
        vectors rather than keywords alone (#30: a client starting one MCP server per call
        never got any). Only with such a gap, it waits at most `wait` seconds for a sync or
        backfill batch of this process to end (a long one: the search answers now, and says how
        far the vectors are).
        No cross-host lock: at worst two hosts embed the same few chunks. Returns how many
        chunks got a vector. Note chunks' piece vectors count the same way: with every vector
        in, at most `limit` chunks lacking pieces are given them (a search after a sync that
        left them, e.g. one whose piece call failed, would otherwise keep saying so)."""
        try:
            if not self._vectors.small_gap(limit):  # read without the lock: most searches stop
                return 0
        except StoreError:
            return 0  # the search reads the same store and says what is wrong
        if not self._lock.acquire(timeout=wait):
            return 0
        try:
            if self._first_index_elsewhere():
                return 0  # its writer backfills once its keyword rows are in
            return self._vectors.run(limit=limit)
        except StoreError as exc:  # read-only or unreachable: the search answers as it is
            log.info("search_backfill_skipped", error=str(exc))
            return 0
        finally:
            self._progress.set_phase("idle")
            self._lock.release()

    def vector_progress(self) -> VectorProgress | None:
        """How far the vectors of the active model are; None without a usable provider."""
        return self._vectors.progress()

    @contextmanager
    def _hold_host(self, *, wait: bool) -> Iterator[bool]:
        """The shared store's sync lock of this agent: True once held (waiting for it when
        `wait`), False when another process holds it and `wait` is off; True with none."""
        if self._host_lock is None:
            yield True
        elif wait:
            with self._host_lock.hold():
                yield True
        else:
            with self._host_lock.try_hold() as held:
                yield held

    def run_unless_read_only(
        self,
        trigger: SyncTrigger,
        progress: Callable[[SyncProgress], None] | None = None,
        backfill_limit: int | None = None,
        *,
        wait_for_host: bool = True,
    ) -> SyncReport | None:
        """Like `run`, but a read-only index is not an error: the sync is skipped (None).

        Searching needs no write: it answers from the index as it is. After the first such
        skip, `take_read_only_notice` has a warning for the caller to show, once.
        `wait_for_host`: see `run` (a search's sync passes False).
        """
        try:
            report = self.run(
                trigger,
                progress=progress,
                backfill_limit=backfill_limit,
                wait_for_host=wait_for_host,
            )
        except SyncRefused:
            return None  # searching needs no sync: the index answers as it is (`refusal`)
        except Exception as exc:
            if not caused_by(exc, StoreReadOnly):
                raise
            return None  # `run` noted it: the caller's search says it
        return report

    @property
    def refusal(self) -> str | None:
        """Why the last sync before a search or in the background stopped (a mass deletion, an
        index of a newer memlane), until a sync succeeds: every search says it, the index is
        stale meanwhile."""
        return self._notices.refusal

    @property
    def refused_by(self) -> SyncRefused | None:
        """The refusal behind `refusal` (a new one for each sync refused), None once one went
        through."""
        return self._notices.refused_by

    def take_read_only_notice(self) -> str | None:
        """The read-only warning, the first time it is asked for after the index was found so."""
        return self._notices.take_read_only_notice()

    def close_store(self) -> None:
        """Wait for a running sync, then release the store. A vector backfill running in it
        (an `index` through the daemon, a gRPC `Sync`) ends after its batch: the process is
        stopping, and what is still missing is embedded by the next one."""
        self._closing.set()
        with self._lock:
            self._store.close()
