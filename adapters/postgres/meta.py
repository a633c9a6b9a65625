"""Adapter plumbing: the per-agent `memlane_meta` rows (IndexMeta record, vector dimension).

The IndexMeta JSON has the same fields as the SQLite store's, so `store copy` moves it as text.
"""

from __future__ import annotations

from typing import Final

from sqlalchemy import Connection

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
