"""Application: MemoryManager, the facade host apps, the CLI and the gRPC server use.

It builds nothing: the container hands it the services and it delegates, sync to
`application.sync`, search to `application.queries`, status to `application.status`, the
background triggers (watcher, interval, session warm-up, sync-on-search) to
`application.scheduler`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import structlog

from memlane.application.messagebus import MessageBus
from memlane.application.ports.agent_indexes import AgentIndexes
from memlane.application.ports.clock import Clock
from memlane.application.ports.event_log import EventLog, RecordedEvent
from memlane.application.ports.file_source import FileSource
from memlane.application.ports.index_store import IndexStore
from memlane.application.ports.watch_lease import LeaseHolder, WatchLease
from memlane.application.queries import Searcher
from memlane.application.reading import read_lines
from memlane.application.reports import (
    GetResult,
    SearchResponse,
    StatusReport,
    SyncProgress,
    SyncReport,
)
from memlane.application.scheduler import BackgroundSyncer, SearchSyncPolicy
from memlane.application.status import StatusReporter
from memlane.application.sync import SyncService
from memlane.application.sync_trigger import SyncTrigger
from memlane.application.vector_backfill import SEARCH_BACKFILL_LIMIT
from memlane.domain.agents import UnknownAgent, parse_agents
from memlane.domain.config import MemorySettings
from memlane.domain.errors import DISABLED_REASON, MemoryDisabled
from memlane.domain.search import SearchQuery, check_query_text, check_window
from memlane.domain.sources import Source
from memlane.domain.time_bounds import TimeInput, parse_time_bound

log = structlog.get_logger()


class MemoryManager:
    """One agent's memory index and the use cases over it."""

    def __init__(
        self,
        *,
        agent_id: str,
        workspace: str,
        settings: MemorySettings,
        syncing: SyncService,
        searcher: Searcher,
        status: StatusReporter,
        background: BackgroundSyncer,
        search_policy: SearchSyncPolicy,
        bus: MessageBus,
        event_log: EventLog,
        sources: Mapping[Source, FileSource],
        clock: Clock,
        redact: Callable[[str], str] | None = None,
        others: AgentIndexes | None = None,
        lease: WatchLease | None = None,
        lease_scope: str = "",
    ) -> None:
        self.agent_id = agent_id
        self.workspace = workspace
        self.settings = settings
        self._syncing = syncing
        self._searcher = searcher
        self._status = status
        self._background = background
        self._search_policy = search_policy
        self._bus = bus
        self._log = event_log
        self._sources = sources
        self._clock = clock
        self._redact = redact
        self._others = others  # None: a store of this agent alone (a fake in tests)
        self._lease = lease
        self._lease_scope = lease_scope
        self._closed = False
        self._close_hooks: list[Callable[[], None]] = []

    def sync(
        self,
        *,
        force: bool = False,
        trigger: SyncTrigger = SyncTrigger.EXPLICIT,
        progress: Callable[[SyncProgress], None] | None = None,
        wait_for_vectors: bool = True,
    ) -> SyncReport:
        """Bring the index in line with the files; `force` rebuilds it completely (safely).

        Returns once every chunk has its vector too, unless `wait_for_vectors` is false: then it
        returns when the keyword rows are committed and the background syncer (`start`, now or
        already running) or a later sync embeds the rest; the report's `vectors` and `status`
        show how far, searches warn meanwhile.
        """
        self._require_enabled()
        if wait_for_vectors:
            return self._syncing.run(trigger, force=force, progress=progress)
        try:
            return self._syncing.run(trigger, force=force, progress=progress, backfill_limit=0)
        finally:
            # A running worker may be idle, waiting for a request: hand it the missing vectors
            # (those of the files committed before a failure too).
            self._background.backfill()

    def _require_enabled(self) -> None:
        # `memorySearch.enabled: false` means no index at all: no sync, no search (the entry
        # points turn this into the reference's disabled payload).
        if not self.settings.enabled:
            raise MemoryDisabled(DISABLED_REASON)

    def refresh(
        self,
        trigger: SyncTrigger = SyncTrigger.EXPLICIT,
        progress: Callable[[SyncProgress], None] | None = None,
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
        self._require_enabled()
        if not self.settings.sync.on_search and self._syncing.has_index():
            return None
        if self._watched_and_fresh():
            return None
        return self._syncing.run_unless_read_only(trigger, progress, SEARCH_BACKFILL_LIMIT)

    def _watcher_of_this_index(self) -> LeaseHolder | None:
        """The live process watching this very index (same workspace, store and sources)."""
        holder = None if self._lease is None else self._lease.holder()
        return holder if holder is not None and holder.scope == self._lease_scope else None

    def _watched_and_fresh(self) -> bool:
        """Whether a live watcher of this very index says every change it saw is indexed
        (the scan before a search is then skipped: a second per 50,000 notes here)."""
        holder = self._watcher_of_this_index()
        if holder is None or not holder.fresh or not self._syncing.has_index():
            return False
        log.debug("sync_skipped", reason="a watcher keeps the index fresh", watcher=holder.pid)
        return True

    def search(
        self,
        query: str,
        *,
        max_results: int | None = None,
        min_score: float | None = None,
        explain: bool = False,
        session_key: str | None = None,
        citations: bool = False,
        agents: Sequence[str] | str | None = None,
        since: TimeInput = None,
        until: TimeInput = None,
        as_of: TimeInput = None,
    ) -> SearchResponse:
        """Search the memory, after the syncs the settings ask for (first search, new session).

        `since` / `until` keep only chunks written within that window (strict, inside both
        legs); `as_of` is when the question is asked (time words in it are read against it;
        default now). Each takes an ISO 8601 date or time, epoch seconds, a datetime, or a
        span back from now (`7d`), domain/time_bounds.py.

        `agents` (ids, or "a,b") searches those agents' memories in one ranking, each hit naming
        its agent; only this agent's index is synced first, the others are read as they are.
        Raises InvalidQuery (before any sync) for a query that is not a string, blank or longer
        than MAX_QUERY_CHARS, or for bad agent ids; UnknownAgent for an agent the store does not
        hold; AgentsNotComparable when the agents' embedding models differ.
        """
        check_query_text(query)
        now = self._clock.now().timestamp()
        start = parse_time_bound(since, now=now, end=False, name="since")
        stop = parse_time_bound(until, now=now, end=True, name="until")
        asked = parse_time_bound(as_of, now=now, end=False, name="as_of")
        check_window(start, stop)
        names = None if agents is None else parse_agents(agents)
        self._require_enabled()
        stores = None if names is None else [(a, self._index_of(a)) for a in names]
        pending = self._search_policy.before_search(session_key)  # first sync unfinished
        response = self._searcher.search(
            SearchQuery(
                text=query,
                max_results=max_results,
                min_score=min_score,
                explain=explain,
                since=start,
                until=stop,
                as_of=asked,
            ),
            now=now,
            citations=citations,
            stores=stores,
        )
        notices = [n for n in (pending, self._syncing.take_read_only_notice()) if n is not None]
        if not notices:
            return response
        return replace(response, warnings=(*response.warnings, *notices))

    def _index_of(self, agent: str) -> IndexStore | None:
        """None for this agent (the searcher's own index), else the other agent's index."""
        if agent == self.agent_id:
            return None
        if self._others is None:
            raise UnknownAgent(agent, store="this agent's store", known=[self.agent_id])
        return self._others.index(agent)

    def get(
        self,
        path: str,
        *,
        from_line: int | None = None,
        lines: int | None = None,
        agent: str | None = None,
    ) -> GetResult:
        """Read lines of a memory file or a transcript (sessions included).

        `agent` reads a hit of another agent's memory (a search across agents) from the
        workspace that agent's index recorded; FileMissing when that folder is not on this host.
        """
        sources, workspace = self._sources, self.workspace
        if agent is not None and agent != self.agent_id:
            (name,) = parse_agents([agent])
            if self._others is None:
                raise UnknownAgent(name, store="this agent's store", known=[self.agent_id])
            files = self._others.files(name)
            sources, workspace = files.sources, files.workspace
        return read_lines(
            sources,
            path,
            from_line=from_line,
            lines=lines,
            redact=self._redact,
            redact_notes=self.settings.redaction.notes,
            workspace=workspace,
        )

    def status(self, *, deep: bool = False) -> StatusReport:
        """Report the index; `deep` also selects and probes the embedding provider."""
        report = self._status.report(deep=deep)
        watcher = self._watcher_of_this_index()
        return report if watcher is None else replace(report, watcher=watcher)

    def recent_events(self, limit: int = 50) -> list[RecordedEvent]:
        """Return the newest `limit` events of the log, oldest first."""
        return self._log.tail(limit)

    def subscribe(self, callback: Callable[[RecordedEvent], None]) -> Callable[[], None]:
        """Call `callback` for each event appended from now on; return an unsubscribe function."""
        return self._bus.subscribe(callback)

    def mark_dirty(self) -> None:
        """Note that files changed; the next search (or the background syncer) syncs."""
        self._syncing.mark_dirty()

    def request_sync(self, trigger: SyncTrigger) -> None:
        """Ask the background syncer for a sync soon (coalesced); only marks dirty until started."""
        self._background.request(trigger)

    def start(self, *, watch: bool | None = None) -> None:
        """Start the background triggers: file watcher, interval timer, debounced syncs."""
        if not self.settings.enabled:
            return
        self._background.start(watch=watch)

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
        self._background.stop()
        self._syncing.close_store()
        if self._others is not None:
            self._others.close()

    def __enter__(self) -> MemoryManager:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    async def asearch(
        self,
        query: str,
        *,
        max_results: int | None = None,
        min_score: float | None = None,
        explain: bool = False,
        session_key: str | None = None,
        citations: bool = False,
        agents: Sequence[str] | str | None = None,
    ) -> SearchResponse:
        """Awaitable `search` that never blocks the caller's event loop."""
        return await asyncio.to_thread(
            self.search,
            query,
            max_results=max_results,
            min_score=min_score,
            explain=explain,
            session_key=session_key,
            citations=citations,
            agents=agents,
        )

    async def aget(
        self,
        path: str,
        *,
        from_line: int | None = None,
        lines: int | None = None,
        agent: str | None = None,
    ) -> GetResult:
        """Awaitable `get`."""
        return await asyncio.to_thread(
            self.get, path, from_line=from_line, lines=lines, agent=agent
        )

    async def async_sync(
        self,
        *,
        force: bool = False,
        trigger: SyncTrigger = SyncTrigger.EXPLICIT,
        wait_for_vectors: bool = True,
    ) -> SyncReport:
        """Awaitable `sync`."""
        return await asyncio.to_thread(
            self.sync, force=force, trigger=trigger, wait_for_vectors=wait_for_vectors
        )

    async def astatus(self, *, deep: bool = False) -> StatusReport:
        """Awaitable `status`."""
        return await asyncio.to_thread(self.status, deep=deep)
