"""Adapter plumbing: the per-agent `memlane_meta` rows (IndexMeta record, vector dimension).

The IndexMeta JSON has the same fields as the SQLite store's, so `store copy` moves it as text.
"""

from __future__ import annotations

import json
import socket
from dataclasses import replace
from typing import TYPE_CHECKING, Final

from sqlalchemy import Connection

from memlane.domain.index_meta import IndexMeta, index_meta_from_json, index_meta_to_json

if TYPE_CHECKING:
    from memlane.adapters.postgres.database import PostgresDatabase

INDEX_META_KEY: Final = "index_meta"
VECTOR_DIMS_KEY: Final = "vector_dims"
# Per-file problems and the last sync that changed the index, kept with it so a new process
# (on any host) reports them; JSON in the agent's meta rows.
ISSUES_KEY: Final = "issues"
LAST_SYNC_KEY: Final = "last_sync"


def put(conn: Connection, agent: str, key: str, value: str) -> None:
    """Set `key` of `agent` to `value`, inserting or replacing."""
    conn.exec_driver_sql(
        "INSERT INTO memlane_meta(agent, key, value) VALUES (%s, %s, %s) "
        "ON CONFLICT (agent, key) DO UPDATE SET value = excluded.value",
        (agent, key, value),
    )


def get(conn: Connection, agent: str, key: str) -> str | None:
    """Return the value of `key` of `agent`, or None."""
    row = conn.exec_driver_sql(
        "SELECT value FROM memlane_meta WHERE agent = %s AND key = %s", (agent, key)
    ).first()
    return None if row is None else str(row[0])


def vector_dims(conn: Connection, agent: str) -> int | None:
    """Return the dimension of the agent's vectors, or None before the first vector."""
    value = get(conn, agent, VECTOR_DIMS_KEY)
    return None if value is None else int(value)


def register_agent(conn: Connection, agent: str) -> None:
    """Make sure `agent` is listed in memlane_agents (listing and event positions use it)."""
    conn.exec_driver_sql(
        "INSERT INTO memlane_agents(agent) VALUES (%s) ON CONFLICT (agent) DO NOTHING", (agent,)
    )


# A first index being written into the live rows (IndexStore.first_index): JSON with the
# writer, the files it found and the IndexMeta it builds; deleted with the meta's write.
FIRST_INDEX_KEY: Final = "first_index"


def delete(conn: Connection, agent: str, key: str) -> None:
    """Remove `key` of `agent` (no-op when unset)."""
    conn.exec_driver_sql("DELETE FROM memlane_meta WHERE agent = %s AND key = %s", (agent, key))


# --- the workspace each host recorded (issue #30) ----------------------------------------------
# Hosts sharing an agent keep its workspace at paths of their own, so the IndexMeta's
# `workspace` is kept per installation (a host and its memlane state dir, as a SQLite index is
# one file in one state dir), in a meta row of its own: `workspace@<host>:<state dir>`. The meta
# JSON keeps the last writer's path too; reads overlay the installation's row when it has one.

WORKSPACE_KEY_PREFIX: Final = "workspace@"


def installation(state_dir: str = "") -> str:
    """The name an installation's workspace record is kept under: this host and `state_dir`."""
    return f"{socket.gethostname()}:{state_dir}"


def workspace_key(host: str) -> str:
    """The meta key of `host`'s workspace record."""
    return f"{WORKSPACE_KEY_PREFIX}{host}"


def index_meta(conn: Connection, agent: str, host: str) -> IndexMeta | None:
    """The agent's IndexMeta with the workspace `host` recorded (when it recorded none, the
    last writer's), None when the agent has no index."""
    value = get(conn, agent, INDEX_META_KEY)
    if value is None:
        return None
    stored = index_meta_from_json(value)
    recorded = get(conn, agent, workspace_key(host))
    return stored if recorded is None else replace(stored, workspace=recorded)


def put_index_meta(conn: Connection, agent: str, host: str, meta: IndexMeta) -> None:
    """Store the agent's IndexMeta, its workspace as `host`'s record."""
    put(conn, agent, INDEX_META_KEY, index_meta_to_json(meta))
    if meta.workspace:
        put(conn, agent, workspace_key(host), meta.workspace)


def peek_workspaces(db: PostgresDatabase, agent: str, host: str) -> tuple[str | None, str | None]:
    """(the workspace `host` recorded for `agent`, the one the meta JSON names), each None when
    absent; read without migrating anything (a database memlane never used has neither)."""
    with db.read() as conn:
        if conn.exec_driver_sql("SELECT to_regclass('memlane_meta')").scalar() is None:
            return None, None
        value = get(conn, agent, INDEX_META_KEY)
        if value is None and (started := get(conn, agent, FIRST_INDEX_KEY)) is not None:
            # An interrupted first index has no meta yet, but its start record names the
            # workspace (the only record of it when claimed by a version before the claim
            # also wrote the installation's workspace row).
            value = str(json.loads(started)["meta"])
        shared = None if value is None else index_meta_from_json(value).workspace or None
        return get(conn, agent, workspace_key(host)) or None, shared
