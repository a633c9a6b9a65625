"""Adapter plumbing: the `meta` key/value table (store bookkeeping and the IndexMeta record).

Every write to `meta` goes through `put`, so there is one upsert statement to get right.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final, cast

from sqlalchemy import Connection

from memlane.adapters.store.in_lists import placeholders
from memlane.domain.index_meta import IndexMeta
from memlane.domain.sources import Source

SCHEMA_VERSION_KEY: Final = "store_schema_version"
DB_ID_KEY: Final = "db_id"
TOKENIZER_KEY: Final = "fts_tokenizer"
VECTOR_DIMS_KEY: Final = "vector_dims"
VEC_STALE_KEY: Final = "vec_table_stale"
GENERATION_KEY: Final = "vector_generation"
INDEX_META_KEY: Final = "index_meta"


def put(conn: Connection, key: str, value: str) -> None:
    """Set `key` to `value`, inserting or replacing."""
    conn.exec_driver_sql(
        "INSERT INTO meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def get(conn: Connection, key: str) -> str | None:
    """Return the value of `key`, or None when it was never set."""
    row = conn.exec_driver_sql("SELECT value FROM meta WHERE key = ?", (key,)).first()
    return None if row is None else str(row[0])


def get_many(conn: Connection, keys: Sequence[str]) -> dict[str, str]:
    """Return the values of those `keys` that are set, in one query."""
    rows = conn.exec_driver_sql(
        f"SELECT key, value FROM meta WHERE key IN ({placeholders(len(keys))})", tuple(keys)
    ).all()
    return {str(k): str(v) for k, v in rows}


def bump_generation(conn: Connection) -> None:
    """Count one more write that touched vectors (in-process vector matrices watch this)."""
    conn.exec_driver_sql(
        "INSERT INTO meta(key, value) VALUES (?, '1') ON CONFLICT(key) "
        "DO UPDATE SET value = CAST(value AS INTEGER) + 1",
        (GENERATION_KEY,),
    )


def vector_dims(conn: Connection) -> int | None:
    """Return the dimension the index's vectors have, or None before the first vector."""
    value = get(conn, VECTOR_DIMS_KEY)
    return None if value is None else int(value)


def index_meta_to_json(meta: IndexMeta) -> str:
    """Encode an IndexMeta as the JSON stored under INDEX_META_KEY."""
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


def recorded_workspace(text: str) -> str | None:
    """The workspace recorded in a stored INDEX_META_KEY value, None when none."""
    value = json.loads(text).get("workspace")
    return str(value) if value else None


def index_meta_from_json(text: str) -> IndexMeta:
    """Decode the JSON stored under INDEX_META_KEY."""
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
        # Absent from metas written before these fields existed: -1 forces a rebuild.
        session_chunk_tokens=int(data.get("session_chunk_tokens", -1)),
        session_chunk_overlap=int(data.get("session_chunk_overlap", -1)),
        workspace=str(data.get("workspace", "")),  # absent before issue #14: none recorded
    )
