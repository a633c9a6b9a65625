"""Entry points (composition): the AgentIndexes of a shared store, over the configured family.

Which agents a store holds and how their indexes open is the family's (`stores.py`). The other
agents' indexes are opened for searching only: nothing here syncs them, since their
workspaces belong to their own processes (possibly on other hosts).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path

from memlane.adapters.sources.filesystem import FilesystemMemorySource
from memlane.adapters.sources.jsonl_sessions import JsonlSessionSource
from memlane.application.ports.agent_indexes import AgentFiles
from memlane.application.ports.file_source import FileMissing
from memlane.application.ports.index_store import IndexStore
from memlane.entrypoints.config.runtime import RuntimeConfig, sessions_dir
from memlane.entrypoints.container.stores import AgentOpener, family_of


class StoreAgentIndexes:
    """Other agents' indexes in the store `rc` configures (AgentIndexes)."""

    def __init__(self, rc: RuntimeConfig, env: Mapping[str, str]) -> None:
        self._rc = rc
        self._env = dict(env)
        self._lock = threading.Lock()
        self._open: dict[str, IndexStore] = {}
        self._opener: AgentOpener | None = None

    def index(self, agent: str) -> IndexStore:
        """The index of `agent` (opened once). Raises UnknownAgent, StoreError."""
        with self._lock:
            store = self._open.get(agent)
            if store is None:
                if self._opener is None:
                    self._opener = family_of(self._rc).agent_opener(self._rc, self._env)
                store = self._opener.index(agent)
                self._open[agent] = store
            return store

    def files(self, agent: str) -> AgentFiles:
        """Where `agent`'s hits are read: its recorded workspace, its transcripts folder."""
        meta = self.index(agent).meta()
        workspace = meta.workspace if meta is not None else ""
        # The CLI shows a FileMissing by its path: the path part says it all.
        if not workspace:
            raise FileMissing(f"agent {agent}'s workspace (its index records none)", "no workspace")
        if not Path(workspace).is_dir():
            raise FileMissing(
                f"{workspace} (agent {agent}'s workspace, not a folder on this host)",
                f"read the hit where that agent runs: `memlane --agent {agent} get PATH`",
            )
        settings = self._rc.settings
        transcripts = sessions_dir(settings, self._rc.state_dir, agent, self._env)
        return AgentFiles(
            workspace=workspace,
            sources={
                "memory": FilesystemMemorySource(
                    workspace=workspace, extra_paths=settings.extra_paths
                ),
                "sessions": JsonlSessionSource(sessions_dir=str(transcripts)),
            },
        )

    def close(self) -> None:
        """Release every opened index; idempotent."""
        with self._lock:
            stores, self._open = list(self._open.values()), {}
            opener, self._opener = self._opener, None
        for store in stores:
            store.close()
        if opener is not None:
            opener.close()
