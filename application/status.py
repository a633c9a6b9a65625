"""Application: the status report, what the index holds and how healthy its parts are."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from memlane.application.embedding_runtime import EmbeddingRuntime
from memlane.application.issues import IssueBoard
from memlane.application.messagebus import MessageBus
from memlane.application.ports.embedding import EmbeddingError
from memlane.application.ports.event_log import EventLog
from memlane.application.ports.file_source import FileSource
from memlane.application.ports.index_store import IndexStore
from memlane.application.reports import RecoveryStats, SearchMode, SourceStatus, StatusReport
from memlane.application.sync import SyncService
from memlane.domain.config import MemorySettings
from memlane.domain.sources import Source


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
        recovery_stats: Callable[[], RecoveryStats] | None = None,
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
        self._recovery_stats = recovery_stats

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
                self._runtime.note_success()
            except EmbeddingError as exc:
                self._issues.report("provider", provider.id, f"probe failed: {exc}")
                self._runtime.note_failure(exc)
        counts = {c.source: c for c in self._store.counts()}
        on_disk: dict[Source, int] = {}
        if deep:  # a fresh process has seen no sync yet: rescan so listing problems show up
            for source, reader in self._sources.items():
                scan = reader.scan()
                self._issues.replace_scan_issues(source, scan.issues)
                on_disk[source] = len(scan.files)
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
        meta = self._store.meta()
        mode: SearchMode = "keyword"
        if selection is None or provider is not None:
            mode = "hybrid" if self._settings.query.hybrid.enabled else "vector"
        issues = self._issues.all()
        return StatusReport(
            agent_id=self._agent_id,
            workspace=self._workspace,
            store_path=self._store.location(),
            provider=(provider.id if provider else "none")
            if selection
            else self._runtime.requested,
            requested_provider=self._runtime.requested,
            model=provider.model if provider else (self._settings.model or None),
            provider_reason=selection.reason if selection else None,
            fallback_from=selection.fallback_from if selection else None,
            fallback_reason=selection.fallback_reason if selection else None,
            search_mode=mode,
            sources=tuple(self._sources),
            extra_paths=self._settings.extra_paths,
            files=sum(s.files for s in by_source),
            chunks=sum(s.chunks for s in by_source),
            by_source=by_source,
            dirty=self._syncing.dirty,
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
            warnings=tuple(w for w in [self._runtime.warning if selected else None] if w),
        )
