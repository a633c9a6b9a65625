"""Adapter plumbing: numbered, idempotent schema migrations and open-time reconciliation.

The store's own schema version lives in `meta` under `store_schema_version` (distinct from
`IndexMeta.schema_version`, which describes the shape of the indexed content). Each migration
runs once, in order, inside the caller's transaction, and is written so that running it again is
harmless. A file written by a newer memlane (a higher version than we know) is refused.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Final

from sqlalchemy import Connection

from memlane.adapters.store import schema
from memlane.domain.keywords import FTS_TOKENIZER, fts_document

Migration = Callable[[Connection], None]

SCHEMA_VERSION_KEY: Final = "store_schema_version"
DB_ID_KEY: Final = "db_id"
TOKENIZER_KEY: Final = "fts_tokenizer"
VECTOR_DIMS_KEY: Final = "vector_dims"
VEC_STALE_KEY: Final = "vec_table_stale"
GENERATION_KEY: Final = "vector_generation"


class SchemaTooNewError(Exception):
    """The file was migrated by a newer version of memlane."""


def m001_core_tables(conn: Connection) -> None:
    """Create meta, files, chunks, embedding_cache, events and tracking, and name the file."""
    schema.metadata.create_all(conn, checkfirst=True)
    conn.exec_driver_sql(
        "INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)", (DB_ID_KEY, uuid.uuid4().hex)
    )


def m002_keyword_table(conn: Connection) -> None:
    """Create the FTS5 keyword table and remember which tokenizer built it."""
    schema.create_fts_table(conn)
    conn.exec_driver_sql(
        "INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)", (TOKENIZER_KEY, FTS_TOKENIZER)
    )


def m003_vector_rowid_index(conn: Connection) -> None:
    """Index the rids of chunks that have a vector (the vector matrix refresh lists them)."""
    conn.exec_driver_sql(
        "CREATE INDEX IF NOT EXISTS idx_chunks_with_vector ON chunks(rid) "
        "WHERE embedding IS NOT NULL"
    )


def m004_vector_deletions(conn: Connection) -> None:
    """Log the rids of deleted vectors, so in-process matrices can drop them incrementally."""
    conn.exec_driver_sql(
        "CREATE TABLE IF NOT EXISTS vector_deletions("
        "seq INTEGER PRIMARY KEY AUTOINCREMENT, rid INTEGER NOT NULL)"
    )


MIGRATIONS: Final[tuple[Migration, ...]] = (
    m001_core_tables,
    m002_keyword_table,
    m003_vector_rowid_index,
    m004_vector_deletions,
)


def schema_version(conn: Connection) -> int:
    """Return the store schema version of the open file (0 for a new file)."""
    if not schema.table_exists(conn, "meta"):
        return 0
    row = conn.exec_driver_sql(
        "SELECT value FROM meta WHERE key = ?", (SCHEMA_VERSION_KEY,)
    ).first()
    return 0 if row is None else int(row[0])


def migrate(conn: Connection, migrations: Sequence[Migration] = MIGRATIONS) -> list[str]:
    """Apply the migrations after the stored version; return the names applied.

    Raises SchemaTooNewError when the file's version is beyond `migrations`.
    """
    current = schema_version(conn)
    if current > len(migrations):
        raise SchemaTooNewError(
            f"store schema {current} is newer than this memlane ({len(migrations)})"
        )
    applied: list[str] = []
    conn.exec_driver_sql(
        "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)"
    )
    for number, migration in enumerate(migrations, start=1):
        if number <= current:
            continue
        migration(conn)
        conn.exec_driver_sql(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (SCHEMA_VERSION_KEY, str(number)),
        )
        applied.append(migration.__name__)
    return applied


def _meta_value(conn: Connection, key: str) -> str | None:
    row = conn.exec_driver_sql("SELECT value FROM meta WHERE key = ?", (key,)).first()
    return None if row is None else str(row[0])


def needs_reconcile(conn: Connection, vector_loaded: bool) -> bool:
    """Return whether `reconcile` has work to do (checked cheaply in a read transaction)."""
    if _meta_value(conn, TOKENIZER_KEY) != FTS_TOKENIZER:
        return True
    if not vector_loaded:
        return False
    dims = _meta_value(conn, VECTOR_DIMS_KEY)
    if dims is None:
        return False
    return _meta_value(conn, VEC_STALE_KEY) == "1" or not schema.table_exists(
        conn, schema.VEC_TABLE
    )


def reconcile(conn: Connection, vector_loaded: bool) -> None:
    """Bring the derived tables in line with `chunks` after a tokenizer or extension change.

    * the FTS tokenizer changed since the keyword table was built: rebuild it from chunks.text;
    * a process without sqlite-vec wrote vectors (flagged stale) or the vec table is missing:
      rebuild the vec table from the float32 blobs in `chunks`.
    """
    if _meta_value(conn, TOKENIZER_KEY) != FTS_TOKENIZER:
        conn.exec_driver_sql(f"DROP TABLE IF EXISTS {schema.FTS_TABLE}")
        schema.create_fts_table(conn)
        rows = conn.exec_driver_sql("SELECT rid, text FROM chunks").all()
        conn.exec_driver_sql(
            f"INSERT INTO {schema.FTS_TABLE}(rowid, terms) VALUES (?, ?)",
            [(rid, fts_document(text)) for rid, text in rows],
        )
        _set(conn, TOKENIZER_KEY, FTS_TOKENIZER)
    dims = _meta_value(conn, VECTOR_DIMS_KEY)
    if not vector_loaded or dims is None:
        return
    stale = _meta_value(conn, VEC_STALE_KEY) == "1"
    if stale or not schema.table_exists(conn, schema.VEC_TABLE):
        conn.exec_driver_sql(f"DROP TABLE IF EXISTS {schema.VEC_TABLE}")
        schema.create_vec_table(conn, int(dims))
        conn.exec_driver_sql(
            f"INSERT INTO {schema.VEC_TABLE}(rowid, embedding) "
            "SELECT rid, embedding FROM chunks WHERE embedding IS NOT NULL"
        )
        _set(conn, VEC_STALE_KEY, "0")


def _set(conn: Connection, key: str, value: str) -> None:
    conn.exec_driver_sql(
        "INSERT INTO meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )
