"""Application: one sync pass, steps 1-6 of `sync.py`'s list, run by `SyncService` under its lock.

Kept apart from the service, which owns the locking, the skips for other processes and the
state searches read (dirty, last report, notices): this is only the work of one pass.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memlane.application.change_detection import ChangeDetector
from memlane.application.embedding_runtime import EmbeddingRuntime
from memlane.application.issues import IssueBoard
from memlane.application.mass_delete import refuse_mass_deletion
from memlane.application.messagebus import MessageBus
from memlane.application.ports.clock import Clock
from memlane.application.ports.event_log import EventLog
from memlane.application.ports.index_store import IndexStore
from memlane.application.progress import ProgressTracker
from memlane.application.reports import SyncProgress, SyncReport
from memlane.application.sync_finish import record_finished, tidy_after_sync
from memlane.application.sync_refusal import IndexFromNewerMemlane
from memlane.application.sync_report import SyncCounter
from memlane.application.sync_trigger import SyncTrigger
from memlane.application.vector_backfill import VectorBackfill
from memlane.domain import events
from memlane.domain.config import MemorySettings
from memlane.domain.index_meta import IndexMeta, built_by_newer, reindex_reason


@dataclass(frozen=True, slots=True)
class SyncPass:
    """What one sync does to the index, given everything it touches."""

    store: IndexStore
    event_log: EventLog
    bus: MessageBus
    detector: ChangeDetector
    runtime: EmbeddingRuntime
    vectors: VectorBackfill
    wanted_meta: Callable[[], IndexMeta]
    issues: IssueBoard
    progress: ProgressTracker
    clock: Clock
    settings: MemorySettings
    # The scope fingerprint's older form: an index that recorded it is not rebuilt.
    legacy_scope_hash: str = ""
    workspace: str = ""  # named in the mass-deletion refusal

    def run(
        self,
        trigger: SyncTrigger,
        *,
        force: bool,
        progress: Callable[[SyncProgress], None] | None,
        backfill_limit: int | None,
        allow_mass_delete: bool = False,
    ) -> tuple[SyncReport, str]:
        """Run the pass; return its report and when it finished (ISO 8601)."""
        stored = self.store.meta()
        if not force and stored is not None:
            # First, before the catch-up: what a newer memlane left pending in the log (a
            # changed file, an interrupted rebuild) would otherwise be handled by this one.
            newer = built_by_newer(stored, self.wanted_meta())
            if newer is not None:
                raise IndexFromNewerMemlane(newer)
        started = self.clock.monotonic()
        self.progress.start(progress)
        counts = SyncCounter()
        unsubscribe = self.bus.subscribe(counts)
        try:
            handled = self.bus.catch_up()  # whatever a crash left pending
            caught_up = counts.indexed  # files the catch-up indexed: the detection finds them
            stored = self.store.meta()
            wanted = self.wanted_meta()
            full = (
                "user_requested"
                if force
                else reindex_reason(stored, wanted, legacy_scope_hash=self.legacy_scope_hash)
            )
            unchanged = held_back = 0
            if full is not None:
                if stored is not None and not allow_mass_delete:
                    # A rebuild drops whatever the sources lack: the same guard first.
                    self._refuse_mass_deletion(self.detector.detect().events)
                before, rebuilt = self.event_log.last_position(), counts.rebuilt
                handled += self.bus.publish(
                    [events.ReindexRequired(occurred_at=self.clock.now(), reason=full)]
                )
                if counts.rebuilt and not rebuilt:  # the catch-up's failures are redone now
                    self.bus.forget_failures_up_to(before)
            else:
                assert stored is not None
                detection = self.detector.detect(respect_thresholds=trigger.automatic)
                if not allow_mass_delete:  # before the meta records a (moved) workspace
                    self._refuse_mass_deletion(detection.events)
                if stored != wanted:
                    self.store.set_meta(wanted)
                # What the catch-up just indexed is unchanged to the detection after it: it was
                # counted as indexed already (a killed or failed sync reported files twice).
                unchanged = max(0, detection.unchanged - caught_up)
                held_back = detection.held_back
                self.progress.set_phase("index", total=len(detection.events))
                handled += self.bus.publish(detection.events)
            if counts.rebuilt:
                # The catch-up rebuilt every file (an interrupted --force); the detection after
                # it finds them unchanged, and counting them again reported each file twice.
                unchanged = 0
            backfilled = self.vectors.run(limit=backfill_limit)
            tidy_after_sync(self.store, self.event_log, self.settings.cache, handled=handled)
            self.progress.set_phase("idle")
        finally:
            unsubscribe()
        report = SyncReport(
            reason=trigger.value,
            # A rebuild the log still held (an interrupted --force) is one too.
            full_reindex=full is not None or counts.rebuilt,
            files_indexed=counts.indexed,
            files_removed=counts.removed,
            files_unchanged=unchanged,
            files_held_back=held_back,
            chunks_embedded=self.progress.chunks_embedded,
            vectors_backfilled=backfilled,
            events_handled=handled,
            duration_ms=round((self.clock.monotonic() - started) * 1000, 2),
            issues=self.issues.all(),
            warnings=tuple(w for w in [self.runtime.warning] if w is not None),
            vectors=self.vectors.index_progress(),
        )
        finished_at = self.clock.now().isoformat()
        self.issues.persist()
        record_finished(self.store, report, finished_at, changed=bool(handled or backfilled))
        return report, finished_at

    def _refuse_mass_deletion(self, found: list[events.Event]) -> None:
        refuse_mass_deletion(
            found,
            self.store,
            limit=self.settings.sync.max_delete_percent,
            workspace=self.workspace,
            before_raising=lambda: self.progress.set_phase("idle"),
        )
