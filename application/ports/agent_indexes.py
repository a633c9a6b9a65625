"""Port: the other agents' memories in a shared store, for searches and reads across agents.

A store shared by several agents (one PostgreSQL database, or one SQLite state directory
holding one index file per agent) lets one agent's process search its colleagues' indexes as
they are: their own processes keep them in sync, so this port only reads. A colleague's files
are read from the workspace its index recorded, when that folder exists on this host.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from memlane.application.ports.file_source import FileSource
from memlane.application.ports.index_store import IndexStore
from memlane.domain.sources import Source


@dataclass(frozen=True, slots=True)
class AgentFiles:
    """Where another agent's indexed files can be read on this host."""

    workspace: str
    sources: Mapping[Source, FileSource] = field(default_factory=dict)


class AgentIndexes(Protocol):
    """Other agents' indexes and files in the store this agent uses."""

    def index(self, agent: str) -> IndexStore:
        """The index of `agent`, opened once and kept until `close`; used for searches only
        (never synced from here).

        Raises:
            UnknownAgent: the store holds no index of `agent`.
            StoreError: the index exists and cannot be opened.
        """
        ...

    def files(self, agent: str) -> AgentFiles:
        """The sources to read `agent`'s hits from (its recorded workspace, its transcripts).

        Raises:
            UnknownAgent: the store holds no index of `agent`.
            FileMissing: the index records no workspace, or it is not a folder on this host.
        """
        ...

    def close(self) -> None:
        """Release every index opened so far; idempotent."""
        ...
