"""Adapter plumbing: the `meta` key/value table (store bookkeeping and the IndexMeta record).

Every write to `meta` goes through `put`, so there is one upsert statement to get right.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final

from sqlalchemy import Connection

from memlane.adapters.store.in_lists import placeholders

SCHEMA_VERSION_KEY: Final = "store_schema_version"
DB_ID_KEY: Final = "db_id"
TOKENIZER_KEY: Final = "fts_tokenizer"
FTS_DOCUMENT_KEY: Final = "fts_document_version"
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


def recorded_workspace(text: str) -> str | None:
    """The workspace recorded in a stored INDEX_META_KEY value, None when none."""
    value = json.loads(text).get("workspace")
    return str(value) if value else None
