"""Application: MemoryManager, the facade host apps, the CLI and the gRPC server use.

It owns the use cases of one agent's memory: sync (change detection → event log → handlers),
search, get, status, and the background triggers (file watcher, interval, session warm-up,
sync-on-search). Only ports come in; the container decides which adapters they are.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from dataclasses import replace

import structlog

from memlane.application.change_detection import ChangeDetector
from memlane.application.embedding_runtime import EmbeddingRuntime
from memlane.application.handlers import IndexFile, RebuildIndex, RemoveFile, build_routes
from memlane.application.indexing import FilePreparer, backfill_vectors
from memlane.application.issues import IssueBoard
from memlane.application.messagebus import MessageBus
from memlane.application.ports.clock import Clock
from memlane.application.ports.embedding import EmbeddingError
from memlane.application.ports.event_log import EventLog, RecordedEvent
from memlane.application.ports.file_source import ChangeWatcher, FileSource
from memlane.application.ports.index_store import IndexStore
from memlane.application.ports.sync_lock import SyncLock
from memlane.application.progress import ProgressTracker
from memlane.application.queries import Searcher
from memlane.application.reading import read_lines
from memlane.application.reports import (
    GetResult,
    RecoveryStats,
    SearchMode,
    SearchResponse,
    SourceStatus,
    StatusReport,
    SyncProgress,
    SyncReport,
)
from memlane.domain import events
from memlane.domain.config import MemorySettings
from memlane.domain.index_meta import (
    CHUNKER_VERSION,
    KEYWORD_ONLY_MODEL,
    SCHEMA_VERSION,
    IndexMeta,
    reindex_reason,
)
from memlane.domain.search import SearchQuery
from memlane.domain.sources import Source

log = structlog.get_logger()

# Triggers that fire on their own respect the session-growth thresholds; explicit syncs don't.
_AUTOMATIC_REASONS = frozenset({"watch", "interval", "search", "session-start"})
_EVENT_LOG_KEEP = 5000


class MemoryManager:
    """One agent's memory index and the use cases over it."""

    def __init__(
        self,
        *,
        agent_id: str,
        workspace: str,
        settings: MemorySettings,
        store: IndexStore,
        event_log: EventLog,
        sources: Mapping[Source, FileSource],
        runtime: EmbeddingRuntime,
        clock: Clock,
        scope_hash: str,
        watcher: ChangeWatcher | None = None,
        redact: Callable[[str], str] | None = None,
        recovery_stats: Callable[[], RecoveryStats] | None = None,
        sync_lock: SyncLock | None = None,
    ) -> None:
        self.agent_id = agent_id
        # Shared stores: one sync of this agent at a time across processes and hosts.
        self._host_lock = sync_lock
        self.workspace = workspace
        self.settings = settings
        self._store = store
        self._log = event_log
        self._sources = {s: sources[s] for s in settings.sources if s in sources}
        self._runtime = runtime
        self._clock = clock
        self._scope_hash = scope_hash
        self._watcher = watcher
        self._redact = redact
        self._recovery_stats = recovery_stats
        self.issues = IssueBoard()
        self.progress = ProgressTracker()
        preparer = FilePreparer(
            self._sources,
            settings.chunking,
            redact,
            session_policy=settings.session_chunking,
            redact_notes=settings.redaction.notes,
        )
        use_cache = settings.cache.enabled
        self._detector = ChangeDetector(
            sources=self._sources,
            store=store,
            issues=self.issues,
            clock=clock,
            session_thresholds=settings.sync.sessions,
        )
        routes = build_routes(
            index_file=IndexFile(
                preparer=preparer,
                store=store,
                runtime=runtime,
                issues=self.issues,
                clock=clock,
                progress=self.progress,
                use_cache=use_cache,
            ),
            remove_file=RemoveFile(store=store, issues=self.issues, clock=clock),
            rebuild_index=RebuildIndex(
                preparer=preparer,
                sources=tuple(self._sources),
                store=store,
                runtime=runtime,
                issues=self.issues,
                clock=clock,
                progress=self.progress,
                wanted_meta=self._wanted_meta,
                use_cache=use_cache,
            ),
        )
        self._bus = MessageBus(event_log, routes, clock)
        self._searcher = Searcher(store=store, runtime=runtime, settings=settings)
        self._sync_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._dirty = True
        self._last_sync: SyncReport | None = None
        self._warm_sessions: set[str] = set()
        self._closed = False
        self._close_hooks: list[Callable[[], None]] = []
        self._scheduler: _BackgroundSyncer | None = None

    # ----------------------------------------------------------------- sync

    def sync(
        self,
        *,
        force: bool = False,
        reason: str = "explicit",
        progress: Callable[[SyncProgress], None] | None = None,
    ) -> SyncReport:
        """Bring the index in line with the files; `force` rebuilds it completely (safely)."""
        with self._sync_lock, self._host_lock.hold() if self._host_lock else nullcontext():
            return self._sync(force=force, reason=reason, progress=progress)

    def _sync(
        self, *, force: bool, reason: str, progress: Callable[[SyncProgress], None] | None
    ) -> SyncReport:
        started = self._clock.monotonic()
        self.progress.start(progress)
        counts = _Counter()
        unsubscribe = self._bus.subscribe(counts)
        try:
            handled = self._bus.catch_up()  # whatever a crash left pending
            stored = self._store.meta()
            wanted = self._wanted_meta()
            full = "user_requested" if force else reindex_reason(stored, wanted)
            unchanged = 0
            if full is not None:
                handled += self._bus.publish(
                    [events.ReindexRequired(occurred_at=self._clock.now(), reason=full)]
                )
            else:
                assert stored is not None
                if stored != wanted:
                    self._store.set_meta(wanted)
                detection = self._detector.detect(respect_thresholds=reason in _AUTOMATIC_REASONS)
                unchanged = detection.unchanged
                self.progress.set_phase("index", total=len(detection.events))
                handled += self._bus.publish(detection.events)
            backfilled = self._backfill()
            self._after_sync()
        finally:
            unsubscribe()
        report = SyncReport(
            reason=reason,
            full_reindex=full is not None,
            files_indexed=counts.indexed,
            files_removed=counts.removed,
            files_unchanged=unchanged,
            chunks_embedded=self.progress.chunks_embedded,
            vectors_backfilled=backfilled,
            events_handled=handled,
            duration_ms=round((self._clock.monotonic() - started) * 1000, 2),
            issues=self.issues.all(),
        )
        with self._state_lock:
            self._dirty = False
            self._last_sync = report
        log.info(
            "sync_finished",
            reason=reason,
            full_reindex=report.full_reindex,
            files_indexed=report.files_indexed,
            files_removed=report.files_removed,
            chunks_embedded=report.chunks_embedded,
            duration_ms=report.duration_ms,
        )
        return report

    def _backfill(self) -> int:
        """Give vectors to chunks indexed without them (new provider, new model, past failures)."""
        provider = self._runtime.provider
        if provider is None:
            return 0
        self.progress.set_phase("vectors")
        try:
            return backfill_vectors(
                self._store,
                provider,
                use_cache=self.settings.cache.enabled,
                on_embedded=self.progress.embedded,
            )
        except EmbeddingError as exc:
            log.warning("vector_backfill_failed", provider=provider.id, error=str(exc))
            self.issues.report("index", "(vectors)", f"embedding failed, will retry: {exc}")
            if self._runtime.fall_back(exc) is not None:
                self._store.set_meta(self._wanted_meta())
                return self._backfill()
            return 0

    def _after_sync(self) -> None:
        if self.settings.cache.enabled and self.settings.cache.max_entries is not None:
            self._store.cache_prune(self.settings.cache.max_entries)
        self._log.compact(keep_last=_EVENT_LOG_KEEP)
        self.progress.set_phase("idle")

    def _wanted_meta(self) -> IndexMeta:
        """The meta this configuration wants; embedding fields stay as stored when keyword-only."""
        provider = self._runtime.provider
        stored = self._store.meta()
        base = IndexMeta(
            schema_version=SCHEMA_VERSION,
            chunker_version=CHUNKER_VERSION,
            sources=tuple(sorted(self._sources)),
            scope_hash=self._scope_hash,
            chunk_tokens=self.settings.chunking.tokens,
            chunk_overlap=self.settings.chunking.overlap,
            session_chunk_tokens=self.settings.session_chunking.tokens,
            session_chunk_overlap=self.settings.session_chunking.overlap,
            provider="none",
            model=KEYWORD_ONLY_MODEL,
            provider_key="",
            dimensions=None,
        )
        if provider is not None:
            return replace(
                base,
                provider=provider.id,
                model=provider.model,
                provider_key=provider.key,
                dimensions=provider.dimensions,
            )
        if stored is not None:  # keep the vectors we have for when the provider returns
            return replace(
                base,
                provider=stored.provider,
                model=stored.model,
                provider_key=stored.provider_key,
                dimensions=stored.dimensions,
            )
        return base

    # --------------------------------------------------------------- search

    def search(
        self,
        query: str,
        *,
        max_results: int | None = None,
        min_score: float | None = None,
        explain: bool = False,
        session_key: str | None = None,
        citations: bool = False,
    ) -> SearchResponse:
        """Search the memory; triggers the syncs the settings ask for (§12.3, §31.24)."""
        self._before_search(session_key)
        return self._searcher.search(
            SearchQuery(text=query, max_results=max_results, min_score=min_score, explain=explain),
            now=self._clock.now().timestamp(),
            citations=citations,
        )

    def _before_search(self, session_key: str | None) -> None:
        sync_settings = self.settings.sync
        if self._store.meta() is None:
            self._wait_for_first_sync(sync_settings.first_search_wait_ms / 1000)
            return
        if (
            sync_settings.on_session_start
            and session_key
            and session_key not in self._warm_sessions
        ):
            self._warm_sessions.add(session_key)
            self.request_sync("session-start")
        elif sync_settings.on_search and self._dirty:
            self.request_sync("search")

    def _wait_for_first_sync(self, timeout: float) -> None:
        """Run the first sync, waiting at most `timeout` seconds for it before searching."""
        done = threading.Event()

        def run() -> None:
            try:
                self.sync(reason="first-search")
            except Exception:
                log.exception("first_sync_failed")
            finally:
                done.set()

        threading.Thread(target=run, name="memlane-first-sync", daemon=True).start()
        if not done.wait(timeout):
            log.warning("first_sync_still_running", waited_s=timeout)

    # ------------------------------------------------------------------ get

    def get(
        self, path: str, *, from_line: int | None = None, lines: int | None = None
    ) -> GetResult:
        """Read lines of a memory file or transcript (§18, sessions included, §32.7)."""
        return read_lines(
            self._sources,
            path,
            from_line=from_line,
            lines=lines,
            redact=self._redact,
            redact_notes=self.settings.redaction.notes,
        )

    # --------------------------------------------------------------- status

    def status(self, *, deep: bool = False) -> StatusReport:
        """Report the fields of §25; `deep` also selects and probes the embedding provider."""
        selection = self._runtime.selection if (deep or self._runtime.is_selected) else None
        provider = selection.provider if selection else None
        if deep and provider is not None:
            try:
                provider.embed_query("ping")
            except EmbeddingError as exc:
                self.issues.report("provider", provider.id, f"probe failed: {exc}")
        counts = {c.source: c for c in self._store.counts()}
        on_disk: dict[Source, int] = {}
        if deep:  # a fresh process has seen no sync yet: rescan so listing problems show up
            for source, reader in self._sources.items():
                scan = reader.scan()
                self.issues.replace_scan_issues(source, scan.issues)
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
            mode = "hybrid" if self.settings.query.hybrid.enabled else "vector"
        return StatusReport(
            agent_id=self.agent_id,
            workspace=self.workspace,
            store_path=self._store.location(),
            provider=(provider.id if provider else "none")
            if selection
            else self._runtime.requested,
            requested_provider=self._runtime.requested,
            model=provider.model if provider else (self.settings.model or None),
            provider_reason=selection.reason if selection else None,
            fallback_from=selection.fallback_from if selection else None,
            fallback_reason=selection.fallback_reason if selection else None,
            search_mode=mode,
            sources=tuple(self._sources),
            extra_paths=self.settings.extra_paths,
            files=sum(s.files for s in by_source),
            chunks=sum(s.chunks for s in by_source),
            by_source=by_source,
            dirty=self._dirty,
            vector_available=vector_ok,
            vector_error=vector_error,
            vector_dims=meta.dimensions if meta else None,
            fts_available=True,
            cache_entries=self._store.cache_size(),
            cache_max_entries=self.settings.cache.max_entries,
            events_position=self._log.last_position(),
            events_pending=self._bus.pending(),
            embed_failures=sum(1 for i in self.issues.all() if "embedding failed" in i.reason),
            readonly_recovery=self._recovery_stats() if self._recovery_stats else RecoveryStats(),
            issues=self.issues.all(),
            last_sync=self._last_sync,
        )

    # --------------------------------------------------------------- events

    def recent_events(self, limit: int = 50) -> list[RecordedEvent]:
        """Return the newest `limit` events of the log, oldest first."""
        return self._log.tail(limit)

    def subscribe(self, callback: Callable[[RecordedEvent], None]) -> Callable[[], None]:
        """Call `callback` for each event appended from now on; return an unsubscribe function."""
        return self._bus.subscribe(callback)

    # ----------------------------------------------------------- background

    def mark_dirty(self) -> None:
        """Note that files changed; the next search (or the background syncer) syncs."""
        with self._state_lock:
            self._dirty = True

    def request_sync(self, reason: str) -> None:
        """Ask the background syncer for a sync soon (coalesced); runs inline if none is started."""
        self.mark_dirty()
        if self._scheduler is not None:
            self._scheduler.request(reason)

    def start(self, *, watch: bool | None = None) -> None:
        """Start the background triggers: file watcher, interval timer, debounced syncs."""
        if self._scheduler is not None:
            return
        sync_settings = self.settings.sync
        self._scheduler = _BackgroundSyncer(
            self,
            self._clock,
            debounce=sync_settings.watch_debounce_ms / 1000,
            interval=sync_settings.interval_minutes * 60,
        )
        self._scheduler.start()
        want_watch = sync_settings.watch if watch is None else watch
        if want_watch and self._watcher is not None:
            roots = [r for src in self._sources.values() for r in src.watch_roots()]
            self._watcher.start(roots, lambda _paths: self.request_sync("watch"))

    def on_close(self, hook: Callable[[], None]) -> None:
        """Call `hook` once when the manager closes (the API uses it to forget the manager)."""
        self._close_hooks.append(hook)

    def close(self) -> None:
        """Stop background work and release the store; idempotent."""
        if self._closed:
            return
        self._closed = True
        for hook in self._close_hooks:
            hook()
        if self._watcher is not None:
            self._watcher.stop()
        if self._scheduler is not None:
            self._scheduler.stop()
        with self._sync_lock:
            self._store.close()

    def __enter__(self) -> MemoryManager:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------- async

    async def asearch(
        self, query: str, **options: int | float | bool | str | None
    ) -> SearchResponse:
        """Awaitable `search` that never blocks the caller's event loop."""
        return await asyncio.to_thread(lambda: self.search(query, **options))  # type: ignore[arg-type]

    async def aget(
        self, path: str, *, from_line: int | None = None, lines: int | None = None
    ) -> GetResult:
        """Awaitable `get`."""
        return await asyncio.to_thread(self.get, path, from_line=from_line, lines=lines)

    async def async_sync(self, *, force: bool = False, reason: str = "explicit") -> SyncReport:
        """Awaitable `sync`."""
        return await asyncio.to_thread(self.sync, force=force, reason=reason)

    async def astatus(self, *, deep: bool = False) -> StatusReport:
        """Awaitable `status`."""
        return await asyncio.to_thread(self.status, deep=deep)


class _Counter:
    """Counts what handlers did during one sync (listens to follow-up events)."""

    def __init__(self) -> None:
        self.indexed = 0
        self.removed = 0

    def __call__(self, record: RecordedEvent) -> None:
        if isinstance(record.event, events.FileIndexed):
            self.indexed += 1
        elif isinstance(record.event, events.FileRemoved):
            self.removed += 1
        elif isinstance(record.event, events.IndexRebuilt):
            self.indexed += record.event.files


class _BackgroundSyncer:
    """A worker thread running coalesced, debounced syncs and interval syncs."""

    def __init__(
        self, manager: MemoryManager, clock: Clock, *, debounce: float, interval: float
    ) -> None:
        self._manager = manager
        self._clock = clock
        self._debounce = debounce
        self._interval = interval
        self._max_delay = max(1.0, 5 * debounce)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._reason: str | None = None
        self._thread = threading.Thread(target=self._run, name="memlane-sync", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def request(self, reason: str) -> None:
        self._reason = reason
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.is_set():
            woke = self._wake.wait(timeout=self._interval if self._interval > 0 else None)
            if self._stop.is_set():
                return
            reason = "interval"
            if woke:
                # Debounce: wait for `debounce` seconds without a new request, but never longer
                # than `max_delay` in all, so a stream of events or searches cannot starve it.
                deadline = self._clock.monotonic() + self._max_delay
                while (
                    self._wake.is_set()
                    and not self._stop.is_set()
                    and self._clock.monotonic() < deadline
                ):
                    self._wake.clear()
                    self._stop.wait(self._debounce)
                self._wake.clear()
                reason = self._reason or "watch"
            if self._stop.is_set():
                return
            try:
                self._manager.sync(reason=reason)
            except Exception:
                log.exception("background_sync_failed", reason=reason)
