"""Application: MemoryManager, the facade host apps, the CLI and the gRPC server use.

It builds nothing: the container hands it the services and it delegates, sync to
`application.sync`, search to `application.queries`, status to `application.status`, the
background triggers (watcher, interval, session warm-up, sync-on-search) to
`application.scheduler`.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import structlog

from memlane.application.messagebus import MessageBus
from memlane.application.ports.agent_indexes import AgentIndexes
from memlane.application.ports.change_journal import ChangeJournal
from memlane.application.ports.clock import Clock
from memlane.application.ports.event_log import EventLog, RecordedEvent
from memlane.application.ports.file_source import FileSource
from memlane.application.ports.index_store import IndexStore
from memlane.application.ports.watch_lease import LeaseHolder, WatchLease
from memlane.application.queries import Searcher
from memlane.application.reading import read_lines, read_messages
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
from memlane.domain.transcripts import TranscriptMessage

log = structlog.get_logger()


def require_enabled(settings: MemorySettings) -> None:
    """The `memorySearch.enabled: false` rule, for every face: memory off means no index at all,
    so no sync, search or read (MemoryDisabled); `status` still reports, saying it is off.

    The entry points turn MemoryDisabled into their form (entrypoints/errors.py); the CLI asks
    before it opens an index at all.
    """
    if not settings.enabled:
        raise MemoryDisabled(DISABLED_REASON)


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
        self._journal: ChangeJournal | None = None
        self._journal_clean: int | None = None  # journal count a completed scan started after
        self._journal_lock = threading.Lock()

    def sync(
        self,
        *,
        force: bool = False,
        trigger: SyncTrigger = SyncTrigger.EXPLICIT,
        progress: Callable[[SyncProgress], None] | None = None,
        wait_for_vectors: bool = True,
        allow_mass_delete: bool = False,
    ) -> SyncReport:
        """Bring the index in line with the files; `force` rebuilds it completely (safely).

        A sync that would remove more than `sync.maxDeletePercent` of a source's indexed files
        raises MassDeletion before writing anything, unless `allow_mass_delete`.

        Returns once every chunk has its vector too, unless `wait_for_vectors` is false: then it
        returns when the keyword rows are committed and the background syncer (`start`, now or
        already running) or a later sync embeds the rest; the report's `vectors` and `status`
        show how far, searches warn meanwhile.
        """
        self._require_enabled()
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

    def _require_enabled(self) -> None:
        require_enabled(self.settings)

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
        if self._journal is not None:
            return self._refresh_by_journal(self._journal, trigger, progress)
        if self._watched_and_fresh():
            return None
        return self._syncing.run_unless_read_only(trigger, progress, SEARCH_BACKFILL_LIMIT)

    def track_changes(self, make_journal: Callable[[list[str]], ChangeJournal]) -> None:
        """Decide `refresh`'s scan by a change journal over the sources' roots (a long-lived
        process: the daemon) instead of by the watch lease, whose holder may not have read the
        newest change yet. The first refresh after this scans."""
        roots = [root for source in self._sources.values() for root in source.watch_roots()]
        journal = make_journal(roots)
        with self._journal_lock:
            old, self._journal, self._journal_clean = self._journal, journal, None
        if old is not None:
            old.close()
        self.on_close(journal.close)
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
        report = self._syncing.run_unless_read_only(trigger, progress, SEARCH_BACKFILL_LIMIT)
        self._scanned(seen, report)
        return report

    def _scanned(self, seen: int | None, report: SyncReport | None) -> None:
        """A sync whose scan began after the journal had counted `seen` changes ended with
        `report`: with nothing held back, every one of those changes is in the index."""
        if seen is not None and report is not None and report.files_held_back == 0:
            with self._journal_lock:
                self._journal_clean = max(seen, self._journal_clean or 0)

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
        hold; AgentsNotComparable when the agents' embedding models differ; MemoryDisabled first
        when memory search is off.
        """
        self._require_enabled()
        check_query_text(query)
        now = self._clock.now().timestamp()
        start = parse_time_bound(since, now=now, end=False, name="since")
        stop = parse_time_bound(until, now=now, end=True, name="until")
        asked = parse_time_bound(as_of, now=now, end=False, name="as_of")
        check_window(start, stop)
        names = None if agents is None else parse_agents(agents)
        stores = None if names is None else [(a, self._index_of(a)) for a in names]
        pending = self._search_policy.before_search(session_key)  # first sync unfinished
        if names is None or self.agent_id in names:
            # A few chunks without a vector are embedded now, as the CLI's refresh does.
            self._syncing.fill_vector_gap(SEARCH_BACKFILL_LIMIT)
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
        refused = self._syncing.refusal
        refusal = None if refused is None else f"the index was not synced: {refused}"
        read_only = self._syncing.take_read_only_notice()
        notices = [n for n in (pending, refusal, read_only) if n is not None]
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
        Raises MemoryDisabled when memory search is off: nothing is read then.
        """
        self._require_enabled()
        sources, workspace = self._files_of(agent)
        return read_lines(
            sources,
            path,
            from_line=from_line,
            lines=lines,
            redact=self._redact,
            redact_notes=self.settings.redaction.notes,
            workspace=workspace,
        )

    def messages(
        self, path: str, *, agent: str | None = None
    ) -> tuple[str, tuple[TranscriptMessage, ...]]:
        """The messages of a transcript (role, JSONL line, time), redacted as `get` shows them;
        the same refusals as `get`, and FileRefused for a path that is not a transcript."""
        self._require_enabled()
        sources, workspace = self._files_of(agent)
        return read_messages(sources, path, redact=self._redact, workspace=workspace)

    def _files_of(self, agent: str | None) -> tuple[Mapping[Source, FileSource], str]:
        """The sources and workspace of `agent`'s files (None or this agent: its own)."""
        if agent is None or agent == self.agent_id:
            return self._sources, self.workspace
        (name,) = parse_agents([agent])
        if self._others is None:
            raise UnknownAgent(name, store="this agent's store", known=[self.agent_id])
        files = self._others.files(name)
        return files.sources, files.workspace

    def status(self, *, deep: bool = False) -> StatusReport:
        """Report the index; `deep` also selects and probes the embedding provider.

        With memory search off the report says so first in its warnings (every face shows
        them): an empty index must not read as a healthy one.
        """
        report = self._status.report(deep=deep)
        if not self.settings.enabled:
            report = replace(report, warnings=(DISABLED_REASON, *report.warnings))
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
