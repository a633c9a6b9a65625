"""Application: MemoryManager, the facade host apps, the CLI and the gRPC server use.

It builds nothing and decides little: the container hands it one object per use-case family
and it delegates, keeping the index in line with the files to `upkeep.IndexUpkeep` (over
`application.sync` and the background triggers of `application.scheduler`), search to
`searching.Searching` (over `application.queries`), `get` to `reading.Reading`, status and
events to `reporting.Reporting`; `agent_directory.AgentDirectory` says whose memory it is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from memlane.application.agent_directory import AgentDirectory
from memlane.application.holders import Holders
from memlane.application.in_thread import in_thread
from memlane.application.ports.change_journal import ChangeJournal
from memlane.application.ports.event_log import RecordedEvent
from memlane.application.reading import Reading
from memlane.application.reporting import Reporting
from memlane.application.reports import (
    GetResult,
    SearchResponse,
    StatusReport,
    SyncProgress,
    SyncReport,
)
from memlane.application.searching import Searching
from memlane.application.sync_trigger import SyncTrigger
from memlane.application.upkeep import IndexUpkeep
from memlane.domain.config import MemorySettings
from memlane.domain.time_bounds import TimeInput
from memlane.domain.transcripts import TranscriptMessage


class MemoryManager:
    """One agent's memory index and the use cases over it."""

    def __init__(
        self,
        *,
        settings: MemorySettings,
        agents: AgentDirectory,
        upkeep: IndexUpkeep,
        searching: Searching,
        reading: Reading,
        reporting: Reporting,
    ) -> None:
        self.agent_id = agents.agent_id
        self.workspace = agents.workspace
        self.settings = settings
        self._agents = agents
        self._upkeep = upkeep
        self._searching = searching
        self._reading = reading
        self._reporting = reporting
        self._closed = False
        self._holders = Holders()
        self._close_hooks: list[Callable[[], None]] = []

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
        return self._upkeep.sync(
            force=force,
            trigger=trigger,
            progress=progress,
            wait_for_vectors=wait_for_vectors,
            allow_mass_delete=allow_mass_delete,
        )

    def sync_written(self) -> SyncReport:
        """Index a note `memory_write` just wrote, without a long wait (see
        `IndexUpkeep.sync_written`)."""
        return self._upkeep.sync_written()

    def refresh(
        self,
        trigger: SyncTrigger = SyncTrigger.BEFORE_SEARCH,
        progress: Callable[[SyncProgress], None] | None = None,
    ) -> SyncReport | None:
        """Sync before reading, as the settings ask (`IndexUpkeep.refresh`); None when the index
        is searched as it is (`sync.onSearch: false`, a fresh watcher, a read-only index)."""
        return self._upkeep.refresh(trigger, progress)

    def check_agents(self, agents: Sequence[str] | str) -> None:
        """Refuse unknown or malformed agent ids now, before a `refresh` syncs anything."""
        self._searching.check_agents(agents)

    def track_changes(self, make_journal: Callable[[list[str]], ChangeJournal]) -> None:
        """Decide `refresh`'s scan by a change journal over the sources' roots (a long-lived
        process: the daemon; `IndexUpkeep.track_changes`), closed with the manager."""
        self._upkeep.track_changes(make_journal)

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
        return self._searching.search(
            query,
            max_results=max_results,
            min_score=min_score,
            explain=explain,
            session_key=session_key,
            citations=citations,
            agents=agents,
            since=since,
            until=until,
            as_of=as_of,
        )

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
        return self._reading.lines(path, from_line=from_line, lines=lines, agent=agent)

    def messages(
        self, path: str, *, agent: str | None = None
    ) -> tuple[str, tuple[TranscriptMessage, ...]]:
        """The messages of a transcript (role, JSONL line, time), redacted as `get` shows them;
        the same refusals as `get`, and FileRefused for a path that is not a transcript."""
        return self._reading.messages(path, agent=agent)

    def status(self, *, deep: bool = False) -> StatusReport:
        """Report the index; `deep` also selects and probes the embedding provider.

        With memory search off the report says so first in its warnings (every face shows
        them): an empty index must not read as a healthy one.
        """
        return self._reporting.status(deep=deep)

    def recent_events(self, limit: int = 50) -> list[RecordedEvent]:
        """Return the newest `limit` events of the log, oldest first."""
        return self._reporting.recent_events(limit)

    def subscribe(self, callback: Callable[[RecordedEvent], None]) -> Callable[[], None]:
        """Call `callback` for each event appended from now on; return an unsubscribe function."""
        return self._reporting.subscribe(callback)

    def mark_dirty(self) -> None:
        """Note that files changed; the next search (or the background syncer) syncs."""
        self._upkeep.mark_dirty()

    def request_sync(self, trigger: SyncTrigger) -> None:
        """Ask the background syncer for a sync soon (coalesced); only marks dirty until started."""
        self._upkeep.request_sync(trigger)

    def start(self, *, watch: bool | None = None) -> None:
        """Start the background triggers: file watcher, interval timer, debounced syncs."""
        self._upkeep.start(watch=watch)

    def on_close(self, hook: Callable[[], None]) -> None:
        """Call `hook` once when the manager closes (the API uses it to forget the manager)."""
        self._close_hooks.append(hook)

    def retain(self) -> None:
        """One more holder (`memlane.open` of a live manager): the last holder's `close` closes."""
        self._holders.add()

    def close(self, *, every_holder: bool = False) -> None:
        """Stop background work and release the store once no holder is left; idempotent."""
        if self._closed or not self._holders.release(every=every_holder):
            return
        self._closed = True
        for hook in self._close_hooks:
            hook()
        self._upkeep.close()
        self._agents.close()

    def __enter__(self) -> MemoryManager:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    asearch = in_thread(search)
    aget = in_thread(get)
    astatus = in_thread(status)

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
