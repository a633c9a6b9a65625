"""Application: the status report, what the index holds and how healthy its parts are."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from memlane.application.change_detection import ChangeDetector
from memlane.application.embedding_runtime import EmbeddingRuntime
from memlane.application.issues import IssueBoard
from memlane.application.mass_delete import MassDeletion, removals_over_limit
from memlane.application.messagebus import MessageBus
from memlane.application.ports.embedding import EmbeddingError, EmbeddingProvider
from memlane.application.ports.event_log import EventLog
from memlane.application.ports.file_source import FileSource
from memlane.application.ports.index_store import IndexStore, SourceCount, VectorProgress
from memlane.application.reports import (
    IndexingProgress,
    RecoveryStats,
    Reembedding,
    SearchMode,
    SourceStatus,
    StatusReport,
)
from memlane.application.sync import SyncService
from memlane.application.sync_failures import SyncVerdicts
from memlane.application.sync_refusal import FORCE_HINT
from memlane.application.sync_report import rebuild_due
from memlane.domain import events
from memlane.domain.config import MemorySettings
from memlane.domain.index_meta import IndexMeta, built_by_newer, reindex_reason, vector_label
from memlane.domain.sources import Source

# How far back from the log's end `status` looks for the runtime fallback that made the index's
# vectors (each sync that tries the configured provider again and falls back records a new one).
FALLBACK_WINDOW: Final = 1000


class StatusReporter:
    """Gathers the status of one agent's memory from the store, the log and the last sync."""

    def __init__(
        self,
        *,
        agent_id: str,
        workspace: str,
        settings: MemorySettings,
        store: IndexStore,
        event_log: EventLog,
        bus: MessageBus,
        sources: Mapping[Source, FileSource],
        runtime: EmbeddingRuntime,
        issues: IssueBoard,
        syncing: SyncService,
        verdicts: SyncVerdicts,
        detector: ChangeDetector,
        recovery_stats: Callable[[], RecoveryStats] | None = None,
        wanted_shape: Callable[[], IndexMeta] | None = None,
        legacy_scope_hash: str = "",
    ) -> None:
        self._agent_id = agent_id
        self._workspace = workspace
        self._settings = settings
        self._store = store
        self._log = event_log
        self._bus = bus
        self._sources = sources
        self._runtime = runtime
        self._issues = issues
        self._syncing = syncing
        self._verdicts = verdicts
        self._recovery_stats = recovery_stats
        self._wanted_shape = wanted_shape
        self._detector = detector
        self._legacy_scope_hash = legacy_scope_hash

    def report(self, *, deep: bool = False) -> StatusReport:
        """Report the index; `deep` also selects and probes the provider and rescans sources."""
        # An explicit provider is selected even in a fresh process (constructing one makes no
        # call): a missing key or a bad setting must show here, not only after a search.
        explicit = self._runtime.requested not in ("auto", "none")
        selected = deep or explicit or self._runtime.is_selected
        selection = self._runtime.selection if selected else None
        provider = selection.provider if selection else None
        if deep and provider is not None:
            try:
                provider.embed_query("ping")
            except EmbeddingError as exc:
                self._runtime.note_failure(exc)  # kept with the index, said in `warnings`
            else:
                self._runtime.note_success()  # clears a failure kept with the index
        counts = {c.source: c for c in self._store.counts()}
        meta = self._store.meta()
        rebuild = self._rebuild_due(meta)
        on_disk: dict[Source, int] = {}
        missing: dict[Source, int] = {}
        changed: str | None = None
        if deep:  # a fresh process has seen no sync yet: rescan so listing problems show up
            # What the next sync would do, found as it finds it (nothing is logged or written).
            detection = self._detector.detect(respect_thresholds=True)
            on_disk = dict(detection.on_disk)
            for event in detection.events:
                if isinstance(event, events.FileDeleted):
                    missing[event.source] = missing.get(event.source, 0) + 1
            if detection.events:
                # An index of a newer memlane is not synced by this one (sync_refusal.py).
                who = (
                    "the next sync indexes them"
                    if not self._newer(meta)
                    else (f"the memlane that built the index indexes them, or `{FORCE_HINT}`")
                )
                changed = (
                    f"{len(detection.events)} file(s) changed on disk since they were indexed "
                    f"(new, edited or removed): {who}"
                )
        # A sync the mass-deletion guard stops leaves the index as it was, so nothing else
        # would show it: this process's refusal, or (deep) the rescan's count of what is gone.
        refused = self._syncing.refusal or self._would_refuse(missing, counts)
        if refused == rebuild:  # a newer memlane's index: `rebuild` says the same refusal
            refused = None
        by_source = [
            SourceStatus(
                source=s,
                files=counts[s].files if s in counts else 0,
                chunks=counts[s].chunks if s in counts else 0,
                files_on_disk=on_disk.get(s),
            )
            for s in self._sources
        ]
        vector_ok, vector_error = self._store.vector_status()
        fused: SearchMode = "hybrid" if self._settings.query.hybrid.enabled else "vector"
        # Before this process selected a provider, what the index recorded is the truth: it
        # names the provider and model that built the vectors (issue #14).
        recorded = meta if meta is not None and meta.provider != "none" else None
        mode: SearchMode = "keyword"
        if self._runtime.requested == "none":
            pass  # keyword-only by request, whatever vectors the index still holds
        elif selection is not None:
            mode = fused if provider is not None else "keyword"
        elif meta is None or (recorded is not None and recorded.dimensions is not None):
            mode = fused  # nothing recorded yet: what the settings will give
        reason = selection.reason if selection else None
        if selection is not None:
            provider_name = provider.id if provider else "none"
            model = provider.model if provider else None
        elif self._runtime.requested == "none":
            provider_name, model = "none", None
        elif recorded is not None:
            provider_name, model = recorded.provider, recorded.model
            reason = "as recorded by the index (`status --deep` checks it now)"
        else:
            provider_name, model = self._runtime.requested, self._settings.model or None
        issues = self._issues.all()
        synced_at, sync_reason, held_back = self._last_sync()
        # A sync that failed or was refused left the index behind the files, whichever process
        # ran it (the verdict is in the log).
        last_failure = self._verdicts.last_failure()
        vectors: VectorProgress | None = None
        reembedding: Reembedding | None = None
        fallback_from = selection.fallback_from if selection else None
        fallback_reason = selection.fallback_reason if selection else None
        if mode != "keyword" and meta is not None and meta.dimensions is not None:
            vectors = self._store.vector_progress(vector_label(meta.model, meta.provider_key))
            if provider is not None:
                reembedding, fell_back = self._reembedding(
                    meta, provider, in_log=fallback_from is None
                )
                if fell_back is not None:  # said as this process's own fallback would be
                    fallback_from, fallback_reason = fell_back.from_provider, fell_back.reason
        return StatusReport(
            agent_id=self._agent_id,
            workspace=self._workspace,
            store_path=self._store.location(),
            provider=provider_name,
            requested_provider=self._runtime.requested,
            model=model,
            provider_reason=reason,
            fallback_from=fallback_from,
            fallback_reason=fallback_reason,
            search_mode=mode,
            sources=tuple(self._sources),
            extra_paths=self._settings.extra_paths,
            files=sum(s.files for s in by_source),
            chunks=sum(s.chunks for s in by_source),
            by_source=by_source,
            dirty=refused is not None
            or last_failure is not None
            or rebuild is not None
            or changed is not None
            or self._dirty(meta is None),
            vector_available=vector_ok,
            vector_error=vector_error,
            vector_dims=meta.dimensions if meta else None,
            fts_available=True,
            cache_entries=self._store.cache_size(),
            cache_max_entries=self._settings.cache.max_entries,
            events_position=self._log.last_position(),
            events_pending=self._bus.pending(),
            embed_failures=sum(1 for i in issues if "embedding failed" in i.reason),
            readonly_recovery=self._recovery_stats() if self._recovery_stats else RecoveryStats(),
            issues=issues,
            last_sync=self._syncing.last_report,
            last_synced_at=synced_at,
            last_sync_reason=sync_reason,
            files_held_back=held_back,
            read_only=self._syncing.read_only,
            last_sync_failure=last_failure,
            warnings=tuple(
                w
                for w in [
                    self._store.vanished(),
                    rebuild,
                    changed,
                    self._warning(selected),
                    refused,
                    reembedding.text() if reembedding else None,
                ]
                if w
            ),
            vectors=vectors,
            reembedding=reembedding,
            vector_index=self._store.vector_index_state(),
            indexing=self._indexing(),
        )

    def _reembedding(
        self, meta: IndexMeta, provider: EmbeddingProvider, *, in_log: bool
    ) -> tuple[Reembedding | None, events.ProviderFellBack | None]:
        """What re-embedding the index owes when its vectors are not of `provider`, the one
        configured: the model changed since the last sync, or a runtime fallback made them
        (`in_log`: this process did not fall back, so look for it in the log); and that
        fallback, as recorded. (None, None) when the vectors are the configured model's."""
        wanted = vector_label(provider.model, provider.key)
        if vector_label(meta.model, meta.provider_key) == wanted:
            return None, None
        fell_back = self._fallback_event(meta.provider, provider.id) if in_log else None
        reembedding = Reembedding(
            indexed_provider=meta.provider,
            indexed_model=meta.model,
            provider=provider.id,
            model=provider.model,
            vectors=self._store.vector_progress(wanted),
            by_fallback=fell_back is not None,
        )
        return reembedding, fell_back

    def _fallback_event(self, indexed: str, configured: str) -> events.ProviderFellBack | None:
        """The newest runtime fallback in the log's last FALLBACK_WINDOW events when it went
        from the `configured` provider to the `indexed` one (whose vectors the index holds)."""
        for record in reversed(self._log.tail(FALLBACK_WINDOW)):
            event = record.event
            if isinstance(event, events.ProviderFellBack):
                if event.to_provider == indexed and event.from_provider == configured:
                    return event
                return None  # a later switch: not the one that made these vectors
        return None

    def _would_refuse(
        self, missing: Mapping[Source, int], counts: Mapping[Source, SourceCount]
    ) -> str | None:
        """The guard's refusal a sync would meet now, from a deep rescan's missing files."""
        indexed = {source: count.files for source, count in counts.items()}
        limit = self._settings.sync.max_delete_percent
        removals = removals_over_limit(missing, indexed, limit)
        if not removals:
            return None
        outcome = "the next sync will stop before removing anything"
        return str(MassDeletion(removals, limit=limit, workspace=self._workspace, outcome=outcome))

    def _indexing(self) -> IndexingProgress | None:
        first = self._store.first_index()
        if first is None:
            return None
        return IndexingProgress(
            files_done=min(first.files_done, first.files_total),
            files_total=first.files_total,
            running=first.running,
        )

    def _warning(self, selected: bool) -> str | None:
        # A fresh process that selected nothing (provider `auto`) still says a failure that an
        # earlier process recorded with the index; selecting here would cost a model load.
        if selected:
            return self._runtime.warning
        return self._runtime.recalled_warning()

    def _rebuild_due(self, stored: IndexMeta | None) -> str | None:
        """What the next sync's full rebuild is for, when the index's shape is not the wanted one
        (an upgrade that chunks otherwise, a changed configuration); None otherwise."""
        if stored is None or self._wanted_shape is None:
            return None
        wanted = self._wanted_shape()
        reason = reindex_reason(stored, wanted, legacy_scope_hash=self._legacy_scope_hash)
        return None if reason is None else rebuild_due(reason, stored, wanted)

    def _newer(self, stored: IndexMeta | None) -> bool:
        """Whether a newer memlane built the index (this one does not sync it)."""
        if stored is None or self._wanted_shape is None:
            return False
        return built_by_newer(stored, self._wanted_shape()) is not None

    def _dirty(self, no_index: bool) -> bool:
        """This process's flag once it synced or saw a change; before, what the index says:
        dirty when there is no index or the log holds work not done (an interrupted sync)."""
        known = self._syncing.dirty_known
        if known is not None:
            return known
        return no_index or self._bus.pending() > 0

    def _last_sync(self) -> tuple[str | None, str | None, int]:
        """When, why and with how many transcripts held back: this process's last sync, else
        the record kept with the index (another process's)."""
        report = self._syncing.last_report
        if report is not None:
            return self._syncing.last_synced_at, report.reason, report.files_held_back
        record = self._store.last_sync()
        if record is None:
            return None, None, 0
        return record.finished_at, record.reason, record.files_held_back
