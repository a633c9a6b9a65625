"""Application: whose memory a manager serves, and the other agents of its store.

Search and `get` may reach across agents (a search across agents names each hit's agent, and
`get` then reads that agent's file); both ask this directory, so "this agent" and "another
agent" are told apart in one place.
"""

from __future__ import annotations

from collections.abc import Mapping

from memlane.application.ports.agent_indexes import AgentIndexes
from memlane.application.ports.file_source import FileSource
from memlane.application.ports.index_store import IndexStore
from memlane.domain.agents import UnknownAgent, parse_agents
from memlane.domain.sources import Source


class AgentDirectory:
    """This agent (its id, workspace and active sources) and, when the store holds several,
    the others (`others` None: a store of this agent alone, a fake in tests)."""

    def __init__(
        self,
        *,
        agent_id: str,
        workspace: str,
        sources: Mapping[Source, FileSource],
        others: AgentIndexes | None = None,
    ) -> None:
        self.agent_id = agent_id
        self.workspace = workspace
        self.sources = sources
        self._others = others

    def index_of(self, agent: str) -> IndexStore | None:
        """None for this agent (the searcher's own index), else the other agent's index."""
        if agent == self.agent_id:
            return None
        return self._require_others(agent).index(agent)

    def files_of(self, agent: str | None) -> tuple[Mapping[Source, FileSource], str]:
        """The sources and workspace of `agent`'s files (None or this agent: its own)."""
        if agent is None or agent == self.agent_id:
            return self.sources, self.workspace
        (name,) = parse_agents([agent])
        files = self._require_others(name).files(name)
        return files.sources, files.workspace

    def _require_others(self, agent: str) -> AgentIndexes:
        if self._others is None:
            raise UnknownAgent(agent, store="this agent's store", known=[self.agent_id])
        return self._others

    def close(self) -> None:
        """Release the other agents' indexes (this agent's store is the upkeep's)."""
        if self._others is not None:
            self._others.close()
