"""Entry points (composition): the AgentIndexes of a shared store, over the configured family.

PostgreSQL: one database holds every agent; an agent is known when the database registered it.
SQLite: agents sharing a state directory each have their own index file there
(`store.path` templates with `{agentId}` included); an agent is known when its file exists.
The other agents' indexes are opened for searching only: nothing here syncs them, since their
workspaces belong to their own processes (possibly on other hosts).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from memlane.adapters.sources.filesystem import FilesystemMemorySource
from memlane.adapters.sources.jsonl_sessions import JsonlSessionSource
from memlane.adapters.store.database import SqliteDatabase
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.adapters.store.transfer import agents as sqlite_agents
from memlane.application.ports.agent_indexes import AgentFiles
from memlane.application.ports.file_source import FileMissing
from memlane.application.ports.index_store import IndexStore
from memlane.domain.agents import UnknownAgent
from memlane.entrypoints.config.env import store_url_for
from memlane.entrypoints.config.runtime import RuntimeConfig, sessions_dir, store_path

if TYPE_CHECKING:  # imported when a PostgreSQL store is used, not by every SQLite search
    from memlane.adapters.postgres.database import PostgresDatabase


class StoreAgentIndexes:
    """Other agents' indexes in the store `rc` configures (AgentIndexes)."""

    def __init__(self, rc: RuntimeConfig, env: Mapping[str, str]) -> None:
        self._rc = rc
        self._env = dict(env)
        self._lock = threading.Lock()
        self._open: dict[str, IndexStore] = {}
        self._postgres: PostgresDatabase | None = None

    def index(self, agent: str) -> IndexStore:
        """The index of `agent` (opened once). Raises UnknownAgent, StoreError."""
        with self._lock:
            store = self._open.get(agent)
            if store is None:
                store = self._open_index(agent)
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
            database, self._postgres = self._postgres, None
        for store in stores:
            store.close()
        if database is not None:
            database.close()

    def _open_index(self, agent: str) -> IndexStore:
        settings = self._rc.settings
        if settings.store.driver == "postgres":
            from memlane.adapters.postgres.database import PostgresDatabase
            from memlane.adapters.postgres.postgres_index_store import PostgresIndexStore
            from memlane.adapters.postgres.transfer import agents as postgres_agents

            if self._postgres is None:
                self._postgres = PostgresDatabase.open(store_url_for(settings, self._env))
            known = postgres_agents(self._postgres)
            if agent not in known:
                raise UnknownAgent(agent, store="the PostgreSQL store", known=known)
            # The indexes share this one database; closing any of them disposes its engine,
            # which only happens in `close`, when all of them go.
            from memlane.adapters.postgres.meta import installation

            # The workspace this installation recorded for that agent, if any (`files`).
            host = installation(str(self._rc.state_dir))
            return PostgresIndexStore(self._postgres, agent, host=host)
        path = store_path(settings, self._rc.state_dir, agent, self._env)
        if path == self._rc.store_path:
            # A `store.path` without `{agentId}` names one file for every agent: it holds this
            # agent's index only, and must not answer as another agent's.
            raise UnknownAgent(agent, store=str(path), known=[self._rc.agent_id])
        if not path.is_file():
            raise UnknownAgent(
                agent, store=f"{path.parent.parent}", known=sqlite_agents(self._rc.state_dir)
            )
        # Opening migrates an index of an older schema, as that agent's own process would.
        database = SqliteDatabase.open(path, load_vector=settings.store.vector_enabled)
        return SqliteIndexStore(database)
