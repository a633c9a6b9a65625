"""Composition: the store families (SQLite, PostgreSQL), each in one object.

The container asks the family `store.driver` names for everything that depends on where the
index lives: the database, this agent's IndexStore, EventLog and SyncLock, the agents the store
holds, bulk transfer, other agents' indexes and the index's identity for the watch lease. A
third family is one more `StoreFamily` in `FAMILIES`. PostgreSQL adapters are imported when that
family is used, never by a SQLite search (the CLI's cold start).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol

from memlane.adapters.store.database import SqliteDatabase
from memlane.adapters.store.first_index import FIRST_INDEX_KEY
from memlane.adapters.store.meta_table import INDEX_META_KEY
from memlane.adapters.store.meta_table import recorded_workspace as recorded_workspace_of
from memlane.adapters.store.sqlite_event_log import SqliteEventLog
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.adapters.store.stand_in import StandInDatabase
from memlane.adapters.store.transfer import SqliteIndexTransfer
from memlane.adapters.store.transfer import agents as sqlite_agents
from memlane.application.ports.event_log import EventLog
from memlane.application.ports.index_store import IndexStore, StoreCorrupt
from memlane.application.ports.index_transfer import IndexTransfer
from memlane.application.ports.sync_lock import SyncLock
from memlane.domain.agents import UnknownAgent
from memlane.domain.errors import ConfigError
from memlane.domain.url_passwords import mask_url_passwords
from memlane.entrypoints.config.running.credentials import store_url_for
from memlane.entrypoints.config.runtime import RuntimeConfig, store_path

if TYPE_CHECKING:
    from memlane.adapters.postgres.database import PostgresDatabase

    StoreDatabase = SqliteDatabase | PostgresDatabase


class AgentOpener(Protocol):
    """Opens other agents' indexes of one store for reading (see container/agents.py)."""

    def index(self, agent: str) -> IndexStore:
        """`agent`'s index. Raises UnknownAgent when the store holds none, StoreError."""
        ...

    def close(self) -> None:
        """Release what the opener itself holds (not the indexes it returned)."""
        ...


class StoreFamily(Protocol):
    """Everything the composition root builds differently per store technology."""

    name: str

    def open(self, rc: RuntimeConfig, env: Mapping[str, str]) -> StoreDatabase:
        """This agent's database."""
        ...

    def stand_in(self, rc: RuntimeConfig) -> StoreDatabase | None:
        """For a command that only reads: an empty index standing in for the agent's store
        when that does not exist, so the command creates nothing (None: the store exists, open
        it). Closing it removes it."""
        ...

    def index_store(self, rc: RuntimeConfig, db: StoreDatabase) -> IndexStore:
        """The index store of `rc`'s agent in `db` (a shared store also keeps the workspace
        of `rc`'s installation)."""
        ...

    def event_log(self, db: StoreDatabase, agent: str) -> EventLog: ...

    def sync_lock(self, db: StoreDatabase, agent: str) -> SyncLock | None:
        """The cross-host sync lock (None: the store serialises writers itself)."""
        ...

    def needs_sync_lock(self) -> bool:
        """Whether `sync_lock` gives one (so the database is not opened just to ask)."""
        ...

    def agents(self, rc: RuntimeConfig, env: Mapping[str, str]) -> list[str]:
        """The agents whose index the configured store holds."""
        ...

    def transfer(self, rc: RuntimeConfig, env: Mapping[str, str], agent: str) -> IndexTransfer:
        """Bulk access to `agent`'s index in the configured store."""
        ...

    def claims(self, target: str) -> bool:
        """Whether a `store copy --to` target names a store of this family."""
        ...

    def target_transfer(
        self, target: str, agent: str, rc: RuntimeConfig | None = None
    ) -> IndexTransfer:
        """Bulk access to `agent`'s index at `target` (one this family claims); a shared store
        records the workspace for the installation `rc` configures (the one copying)."""
        ...

    def identity(self, rc: RuntimeConfig, env: Mapping[str, str]) -> str:
        """Names this agent's index, for the watch lease (no secret in it)."""
        ...

    def agent_opener(self, rc: RuntimeConfig, env: Mapping[str, str]) -> AgentOpener: ...

    def recorded_workspace(
        self, rc: RuntimeConfig, env: Mapping[str, str]
    ) -> tuple[str | None, str]:
        """(the workspace the agent's index recorded for this installation or None; the
        index's name for messages), read without migrating or creating anything."""
        ...


class SqliteFamily:
    """One SQLite file per agent (`store.path`, default `<state>/agents/<id>/memory.db`); the
    file is the agent, so the agent id and the environment go unused."""

    name = "sqlite"

    def open(self, rc: RuntimeConfig, env: Mapping[str, str]) -> StoreDatabase:  # noqa: ARG002 - the StoreFamily signature
        return SqliteDatabase.open(rc.store_path, load_vector=rc.settings.store.vector_enabled)

    def stand_in(self, rc: RuntimeConfig) -> StoreDatabase | None:
        if rc.store_path.exists():
            return None
        return StandInDatabase.create(rc.store_path, load_vector=rc.settings.store.vector_enabled)

    def index_store(self, rc: RuntimeConfig, db: StoreDatabase) -> IndexStore:  # noqa: ARG002 - the StoreFamily signature
        assert isinstance(db, SqliteDatabase)
        return SqliteIndexStore(db)

    def event_log(self, db: StoreDatabase, agent: str) -> EventLog:  # noqa: ARG002 - the StoreFamily signature
        assert isinstance(db, SqliteDatabase)
        return SqliteEventLog(db)

    def sync_lock(self, db: StoreDatabase, agent: str) -> SyncLock | None:  # noqa: ARG002 - the StoreFamily signature
        return None  # writes are serialised per transaction by SQLite itself

    def needs_sync_lock(self) -> bool:
        return False

    def agents(self, rc: RuntimeConfig, env: Mapping[str, str]) -> list[str]:  # noqa: ARG002 - the StoreFamily signature
        return sqlite_agents(rc.state_dir)

    def transfer(self, rc: RuntimeConfig, env: Mapping[str, str], agent: str) -> IndexTransfer:
        return SqliteIndexTransfer.open(store_path(rc.settings, rc.state_dir, agent, env))

    def claims(self, target: str) -> bool:  # noqa: ARG002 - the StoreFamily signature
        return True  # any other target is a state directory (`sqlite:DIR` or DIR)

    def target_transfer(
        self, target: str, agent: str, rc: RuntimeConfig | None = None
    ) -> IndexTransfer:
        del rc  # the StoreFamily signature: a SQLite file records no installation
        state = Path(target.removeprefix("sqlite:")).expanduser()
        return SqliteIndexTransfer.open(state / "agents" / agent / "memory.db")

    def identity(self, rc: RuntimeConfig, env: Mapping[str, str]) -> str:  # noqa: ARG002 - the StoreFamily signature
        return f"sqlite:{rc.store_path.resolve()}"

    def recorded_workspace(
        self, rc: RuntimeConfig, env: Mapping[str, str]
    ) -> tuple[str | None, str]:
        del env  # the StoreFamily signature: a SQLite file needs no connection settings
        value = SqliteDatabase.peek_meta(rc.store_path, INDEX_META_KEY)
        try:
            if value is None:
                # A first index that was interrupted (killed, disk full) has no finished record
                # yet, but its start record names the workspace it indexes: resuming it from
                # another folder must not bind it there and drop what it already holds.
                value = _started_index_meta(rc.store_path)
            return (None if value is None else recorded_workspace_of(value)), str(rc.store_path)
        except (ValueError, KeyError, TypeError) as exc:  # the meta record itself is damaged
            raise StoreCorrupt(f"{rc.store_path}: unreadable index meta: {exc}") from exc

    def agent_opener(self, rc: RuntimeConfig, env: Mapping[str, str]) -> AgentOpener:
        return _SqliteAgents(rc, env)


class _SqliteAgents:
    """Agents sharing a state directory each have their own index file there (`store.path`
    templates with `{agentId}` included); an agent is known when its file holds an index. A
    file alone is not enough: an index whose first sync failed before it recorded anything, or
    a `--agent typo status` of an older memlane (which created the file), must not make the
    name a searchable agent."""

    def __init__(self, rc: RuntimeConfig, env: Mapping[str, str]) -> None:
        self._rc = rc
        self._env = env

    def index(self, agent: str) -> IndexStore:
        rc = self._rc
        path = store_path(rc.settings, rc.state_dir, agent, self._env)
        if path == rc.store_path:
            # A `store.path` without `{agentId}` names one file for every agent: it holds this
            # agent's index only, and must not answer as another agent's.
            raise UnknownAgent(agent, store=str(path), known=[rc.agent_id])
        if SqliteDatabase.peek_meta(path, INDEX_META_KEY) is not None:
            # Opening migrates an index of an older schema, as that agent's own process would.
            database = SqliteDatabase.open(path, load_vector=rc.settings.store.vector_enabled)
            return SqliteIndexStore(database)
        known = [a for a in sqlite_agents(rc.state_dir) if a == rc.agent_id or _indexed(rc, a)]
        raise UnknownAgent(agent, store=f"{path.parent.parent}", known=known)

    def close(self) -> None:
        return None  # each index owns its file


def _started_index_meta(path: Path) -> str | None:
    """The IndexMeta JSON of the first index under way (or interrupted) in `path`, if any."""
    started = SqliteDatabase.peek_meta(path, FIRST_INDEX_KEY)
    return None if started is None else str(json.loads(started)["meta"])


def _indexed(rc: RuntimeConfig, agent: str) -> bool:
    """Whether `agent`'s file in the default layout holds an index (read only, no migration)."""
    path = rc.state_dir / "agents" / agent / "memory.db"
    return SqliteDatabase.peek_meta(path, INDEX_META_KEY) is not None


class PostgresFamily:
    """One PostgreSQL database shared by every agent (and host); rows carry the agent id."""

    name = "postgres"
    _SCHEMES: Final = ("postgresql://", "postgresql+psycopg://", "postgres://")

    def open(self, rc: RuntimeConfig, env: Mapping[str, str]) -> StoreDatabase:
        return _postgres_database(store_url_for(rc.settings, env))

    def stand_in(self, rc: RuntimeConfig) -> StoreDatabase | None:
        del rc  # the StoreFamily signature: the shared database is there, and creates no file
        return None

    def index_store(self, rc: RuntimeConfig, db: StoreDatabase) -> IndexStore:
        from memlane.adapters.postgres.postgres_index_store import PostgresIndexStore

        assert not isinstance(db, SqliteDatabase)
        return PostgresIndexStore(db, rc.agent_id, host=installation_of(rc))

    def event_log(self, db: StoreDatabase, agent: str) -> EventLog:
        from memlane.adapters.postgres.postgres_event_log import PostgresEventLog

        assert not isinstance(db, SqliteDatabase)
        return PostgresEventLog(db, agent)

    def sync_lock(self, db: StoreDatabase, agent: str) -> SyncLock | None:
        from memlane.adapters.postgres.sync_lock import PostgresSyncLock

        assert not isinstance(db, SqliteDatabase)
        return PostgresSyncLock(db, agent)

    def needs_sync_lock(self) -> bool:
        return True

    def agents(self, rc: RuntimeConfig, env: Mapping[str, str]) -> list[str]:
        from memlane.adapters.postgres.transfer import agents as postgres_agents

        db = _postgres_database(store_url_for(rc.settings, env))
        try:
            return postgres_agents(db)
        finally:
            db.close()

    def transfer(self, rc: RuntimeConfig, env: Mapping[str, str], agent: str) -> IndexTransfer:
        return self.target_transfer(store_url_for(rc.settings, env), agent, rc)

    def claims(self, target: str) -> bool:
        return target.startswith(self._SCHEMES)

    def target_transfer(
        self, target: str, agent: str, rc: RuntimeConfig | None = None
    ) -> IndexTransfer:
        from memlane.adapters.postgres.transfer import PostgresIndexTransfer

        host = "" if rc is None else installation_of(rc)
        return PostgresIndexTransfer(_postgres_database(target), agent, host=host)

    def identity(self, rc: RuntimeConfig, env: Mapping[str, str]) -> str:
        url = store_url_for(rc.settings, env)  # only as a digest: it may hold a password
        return "postgres:" + hashlib.sha256(url.encode()).hexdigest()[:16]

    def recorded_workspace(
        self, rc: RuntimeConfig, env: Mapping[str, str]
    ) -> tuple[str | None, str]:
        from memlane.adapters.postgres.database import PostgresDatabase
        from memlane.adapters.postgres.meta import peek_workspaces

        db = PostgresDatabase(store_url_for(rc.settings, env), pool_size=1)
        label = f"{db.location}#agent={rc.agent_id}"
        try:
            own, shared = peek_workspaces(db, rc.agent_id, installation_of(rc))
        finally:
            db.close()
        # An index from before records were kept per installation, started with no workspace
        # named, takes the one the index names if that folder exists here (not the cwd).
        if own is None and rc.workspace_origin == "cwd" and shared and Path(shared).is_dir():
            return shared, label
        return own, label

    def agent_opener(self, rc: RuntimeConfig, env: Mapping[str, str]) -> AgentOpener:
        return _PostgresAgents(store_url_for(rc.settings, env), host=installation_of(rc))


class _PostgresAgents:
    """One database holds every agent; an agent is known when the database registered it."""

    def __init__(self, url: str, *, host: str) -> None:
        self._url = url
        self._host = host  # the workspace this installation recorded per agent (`files`)
        self._db: PostgresDatabase | None = None

    def index(self, agent: str) -> IndexStore:
        from memlane.adapters.postgres.postgres_index_store import PostgresIndexStore
        from memlane.adapters.postgres.transfer import agents as postgres_agents

        if self._db is None:
            self._db = _postgres_database(self._url)
        known = postgres_agents(self._db)
        if agent not in known:
            raise UnknownAgent(agent, store="the PostgreSQL store", known=known)
        # The indexes share this one database; closing any of them disposes its engine, which
        # only happens in `close`, when all of them go.
        return PostgresIndexStore(self._db, agent, host=self._host)

    def close(self) -> None:
        db, self._db = self._db, None
        if db is not None:
            db.close()


def installation_of(rc: RuntimeConfig) -> str:
    """The name of this host and state dir in a shared store's workspace records."""
    from memlane.adapters.postgres.meta import installation

    return installation(str(rc.state_dir))


def _postgres_database(url: str) -> PostgresDatabase:
    from memlane.adapters.postgres.database import PostgresDatabase

    return PostgresDatabase.open(url)


# Checked in this order for a `store copy --to` target: SQLite, which takes any folder, last.
FAMILIES: Final[Mapping[str, StoreFamily]] = {
    "postgres": PostgresFamily(),
    "sqlite": SqliteFamily(),
}


def family_of(rc: RuntimeConfig) -> StoreFamily:
    """The family `store.driver` names."""
    return FAMILIES[rc.settings.store.driver]


# A target that looks like a URL (`scheme://`) names a server; SQLite takes folders only, so a
# URL no family claims (mysql://, a typo of postgresql://) is refused rather than read as a path.
# `sqlite:///abs/dir` stays a folder, as `sqlite:DIR` reads it.
_URL_TARGET: Final = re.compile(r"^(?!sqlite:)[A-Za-z][A-Za-z0-9+.-]*://", re.IGNORECASE)


def family_of_target(target: str) -> StoreFamily:
    """The family a `store copy --to` target names.

    Raises:
        ConfigError: `target` is a URL of a store memlane does not support.
    """
    if _URL_TARGET.match(target) and not FAMILIES["postgres"].claims(target):
        raise ConfigError(
            "--to",
            f"unsupported store {mask_url_passwords(target)!r}: copy to a PostgreSQL URL "
            "(postgresql://...) or a SQLite state dir (sqlite:DIR or DIR)",
        )
    return next(family for family in FAMILIES.values() if family.claims(target))
