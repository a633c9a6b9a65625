"""Application: the search use case as the facade runs it (the searching family).

Around the query pipeline (`queries.Searcher`): the checks that refuse a bad query before any
sync (the time window's bounds read against one clock reading), the syncs the settings ask for
before a search (`SearchSyncPolicy`), the indexes of the agents searched, a small vector gap
filled, and the notices a search carries back (first sync unfinished, a sync refused, a
read-only index, hits from files changed since they were indexed when the search did not sync).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from memlane.application.agent_directory import AgentDirectory
from memlane.application.enabled import require_enabled
from memlane.application.issues import IssueBoard
from memlane.application.ports.clock import Clock
from memlane.application.ports.index_store import IndexStore
from memlane.application.queries import Searcher
from memlane.application.reports import SearchResponse
from memlane.application.search_syncs import SearchSyncPolicy
from memlane.application.stale_hits import (
    stale_paths,
    stale_warning,
    unindexed_versions,
    unindexed_warning,
)
from memlane.application.sync import SyncService
from memlane.application.vector_backfill import SEARCH_BACKFILL_LIMIT
from memlane.domain.agents import parse_agents
from memlane.domain.config import MemorySettings
from memlane.domain.search import SearchQuery, check_query_text, check_window
from memlane.domain.time_bounds import TimeInput, is_span, parse_time_bound


class Searching:
    """One search: checked, preceded by the syncs it needs, answered with its notices."""

    def __init__(
        self,
        *,
        settings: MemorySettings,
        searcher: Searcher,
        policy: SearchSyncPolicy,
        syncing: SyncService,
        agents: AgentDirectory,
        clock: Clock,
        store: IndexStore,
        issues: IssueBoard,
    ) -> None:
        self._settings = settings
        self._store = store
        self._issues = issues
        self._searcher = searcher
        self._policy = policy
        self._syncing = syncing
        self._agents = agents
        self._clock = clock

    def search(
        self,
        query: str,
        *,
        max_results: int | None,
        min_score: float | None,
        explain: bool,
        session_key: str | None,
        citations: bool,
        agents: Sequence[str] | str | None,
        since: TimeInput,
        until: TimeInput,
        as_of: TimeInput,
    ) -> SearchResponse:
        """See `MemoryManager.search` (the refusals come in the order it documents)."""
        require_enabled(self._settings)
        check_query_text(query)
        now = self._clock.now().timestamp()
        asked = parse_time_bound(as_of, now=now, end=False, name="as_of")
        # A span (`7d`) counts back from when the question is asked.
        said = now if asked is None else asked
        start = parse_time_bound(since, now=said, end=False, name="since")
        stop = parse_time_bound(until, now=said, end=True, name="until")
        if stop is None and asked is not None and is_span(since):
            # `--since 7d --as-of D`: the seven days up to D, the day asked included
            stop = parse_time_bound(as_of, now=now, end=True, name="as_of")
        check_window(start, stop)
        names = None if agents is None else self.check_agents(agents)
        stores = None if names is None else [(a, self._agents.index_of(a)) for a in names]
        pending = self._policy.before_search(session_key)  # first sync unfinished
        if names is None or self._agents.agent_id in names:
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
        rebuilding = self._syncing.rebuild_notice
        host_busy = self._syncing.take_host_busy_notice()
        stale = self._stale_notice(response)
        empty = None
        # Not while the first sync runs, was refused or a rebuild is under way: those say why.
        quiet = start is None and stop is None and names is None
        if not response.results and quiet and not (pending or refusal or rebuilding):
            empty = self._empty_index_notice()
        notices = [
            n for n in (pending, refusal, read_only, rebuilding, host_busy, stale, empty) if n
        ]
        if not notices:
            return response
        return replace(response, warnings=(*response.warnings, *notices))

    def _empty_index_notice(self) -> str | None:
        """A search of an index holding no file answers "no matches" as if the memory had
        nothing on the question: say that it holds nothing at all, and where it looked (read
        only when a search found nothing, so a large index pays the count rarely)."""
        if any(count.files for count in self._store.counts()):
            return None
        return (
            f"the index holds no files: no notes (MEMORY.md, memory.md, memory/**/*.md, "
            f"extraPaths) in the workspace {self._agents.workspace} and no transcripts were "
            f"found; `memlane status --deep` lists what was looked at"
        )

    def _stale_notice(self, response: SearchResponse) -> str | None:
        """With `sync.onSearch: false` the index is searched as it is: name the hits' files
        changed since they were indexed (one stat per distinct file, application/stale_hits.py).
        With it on, this agent's index was synced before the search (the CLI's refresh) or is
        kept so by the process's watcher: the files whose new version the sync could not index
        are named (from the problems it recorded), and while changes wait to be indexed (the
        watcher's debounce: a long-running UI or server) the hits' files are checked too."""
        if not response.results:
            return None
        if self._settings.sync.on_search:
            found = unindexed_versions(
                response.results,
                store=self._store,
                issues=self._issues,
                agent_id=self._agents.agent_id,
            )
            said = unindexed_warning(found)
            if said is not None or self._syncing.dirty_known is not True:
                return said
            # Changes seen and not yet indexed (a watcher's debounce, a sync under way): this
            # search read the index as it was, so its hits' files are checked as without syncs.
        paths = stale_paths(
            response.results,
            store=self._store,
            sources=self._agents.sources,
            agent_id=self._agents.agent_id,
        )
        return stale_warning(paths, syncing=self._settings.sync.on_search)

    def check_agents(self, agents: Sequence[str] | str) -> list[str]:
        """The agent ids asked for, each one the store holds (its index opened once, as the
        search will use it); InvalidQuery / UnknownAgent before any sync does work."""
        names = parse_agents(agents)
        for agent in names:
            self._agents.index_of(agent)
        return list(names)
