"""Adapter plumbing: the per-agent `memlane_meta` rows (IndexMeta record, vector dimension).

The IndexMeta JSON has the same fields as the SQLite store's, so `store copy` moves it as text.
"""

from __future__ import annotations

import json
from typing import Final, cast

from sqlalchemy import Connection

from memlane.domain.index_meta import IndexMeta
from memlane.domain.sources import Source

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


def index_meta_to_json(meta: IndexMeta) -> str:
    """Encode an IndexMeta (the same JSON shape as the SQLite store's)."""
    return json.dumps(
        {
            "schema_version": meta.schema_version,
            "chunker_version": meta.chunker_version,
            "sources": list(meta.sources),
            "scope_hash": meta.scope_hash,
            "chunk_tokens": meta.chunk_tokens,
            "chunk_overlap": meta.chunk_overlap,
            "provider": meta.provider,
            "model": meta.model,
            "provider_key": meta.provider_key,
            "dimensions": meta.dimensions,
            "session_chunk_tokens": meta.session_chunk_tokens,
            "session_chunk_overlap": meta.session_chunk_overlap,
            "workspace": meta.workspace,
        }
    )


def index_meta_from_json(text: str) -> IndexMeta:
    """Decode the IndexMeta JSON."""
    data = json.loads(text)
    return IndexMeta(
        schema_version=int(data["schema_version"]),
        chunker_version=int(data["chunker_version"]),
        sources=tuple(cast(list[Source], data["sources"])),
        scope_hash=str(data["scope_hash"]),
        chunk_tokens=int(data["chunk_tokens"]),
        chunk_overlap=int(data["chunk_overlap"]),
        provider=str(data["provider"]),
        model=str(data["model"]),
        provider_key=str(data["provider_key"]),
        dimensions=None if data["dimensions"] is None else int(data["dimensions"]),
        session_chunk_tokens=int(data.get("session_chunk_tokens", -1)),
        session_chunk_overlap=int(data.get("session_chunk_overlap", -1)),
        workspace=str(data.get("workspace", "")),
    )
