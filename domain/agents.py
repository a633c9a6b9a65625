"""Domain: searching several agents' memories in one ranking (which agent a chunk belongs to,
which agents were asked for, and when their scores cannot be fused).

Chunk ids are unique within one agent's index only (two agents holding the same note have the
same chunk id), so a cross-agent search qualifies every candidate's id with its agent before
fusion and reads the agent back from it afterwards.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from memlane.domain.chunks import ChunkId
from memlane.domain.errors import InvalidQuery

# A separator no agent id can contain (ids are letters, digits, '_' and '-').
_SEPARATOR: Final = "\x1f"
_AGENT_ID: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_AGENTS: Final = 32


class UnknownAgent(InvalidQuery):
    """An agent was asked for that the store holds no index of."""

    def __init__(self, agent: str, *, store: str, known: Sequence[str]) -> None:
        self.agent = agent
        listing = ", ".join(known) if known else "none"
        super().__init__(
            f"unknown agent {agent!r}: {store} holds no index of it (agents there: {listing})"
        )


class AgentsNotComparable(InvalidQuery):
    """The asked agents' vectors come from different embedding models: cosines of different
    models are on different scales (and of different dimensions), so no fused ranking is fair."""


def parse_agents(value: object) -> tuple[str, ...]:
    """The agent ids of a request: a list of ids or one comma-separated string.

    Blank entries are dropped, repeats kept once in first-seen order.

    Raises:
        InvalidQuery: not a list of strings, no id at all, an id that is not a valid agent id
            (letters, digits, '_' and '-', at most 64), or more than MAX_AGENTS ids.
    """
    raw: object = value
    if isinstance(raw, str):
        raw = raw.split(",")
    if not isinstance(raw, list | tuple) or not all(isinstance(a, str) for a in raw):
        raise InvalidQuery("agents must be a list of agent ids (or 'a,b')")
    agents = tuple(dict.fromkeys(a.strip() for a in raw if a.strip()))
    if not agents:
        raise InvalidQuery("agents: name at least one agent id")
    for agent in agents:
        if not _AGENT_ID.fullmatch(agent):
            raise InvalidQuery(
                f"invalid agent id {agent!r}: use letters, digits, '_' and '-' (max 64)"
            )
    if len(agents) > MAX_AGENTS:
        raise InvalidQuery(f"agents: at most {MAX_AGENTS} agents per search")
    return agents


def qualified(agent: str, chunk_id: ChunkId) -> ChunkId:
    """`chunk_id` made unique across agents."""
    return ChunkId(f"{agent}{_SEPARATOR}{chunk_id}")


def unqualified(chunk_id: ChunkId) -> ChunkId:
    """The chunk id within its agent's index (the id itself when unqualified)."""
    _, separator, own = chunk_id.partition(_SEPARATOR)
    return ChunkId(own) if separator else chunk_id


def agent_of(chunk_id: ChunkId) -> str:
    """The agent of a qualified chunk id ("" for an unqualified one)."""
    agent, separator, _ = chunk_id.partition(_SEPARATOR)
    return agent if separator else ""
