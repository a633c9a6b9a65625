"""Adapter plumbing: the SQLite schema (SQLAlchemy Core tables plus FTS5 and vec0 DDL).

`chunks.rid` is an AUTOINCREMENT integer key, never reused: the FTS5 row and the vec0 row of a
chunk carry the same rowid, so joins are rowid lookups, and an in-process vector matrix can be
refreshed incrementally (a new rid means a new or changed vector).
"""

from __future__ import annotations

from sqlalchemy import (
    Column,
    Connection,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    Table,
    Text,
)

from memlane.domain.keywords import FTS_TOKENIZER

metadata = MetaData()

meta = Table(
    "meta",
    metadata,
    Column("key", Text, primary_key=True),
    Column("value", Text, nullable=False),
)

files = Table(
    "files",
    metadata,
    Column("source", Text, primary_key=True),
    Column("path", Text, primary_key=True),
    Column("hash", Text, nullable=False),
    Column("mtime", Float, nullable=False),
    Column("size", Integer, nullable=False),
)

chunks = Table(
    "chunks",
    metadata,
    Column("rid", Integer, primary_key=True, autoincrement=True),
    Column("id", Text, nullable=False, unique=True),
    Column("source", Text, nullable=False),
    Column("path", Text, nullable=False),
    Column("start_line", Integer, nullable=False),
    Column("end_line", Integer, nullable=False),
    Column("hash", Text, nullable=False),
    Column("text", Text, nullable=False),
    Column("model", Text, nullable=False),
    Column("embedding", LargeBinary, nullable=True),
    Column("timestamp", Float, nullable=True),
    Column("updated_at", Float, nullable=False),
    sqlite_autoincrement=True,
)
Index("idx_chunks_file", chunks.c.source, chunks.c.path)
Index("idx_chunks_model", chunks.c.model)

embedding_cache = Table(
    "embedding_cache",
    metadata,
    Column("provider", Text, primary_key=True),
    Column("model", Text, primary_key=True),
    Column("provider_key", Text, primary_key=True),
    Column("hash", Text, primary_key=True),
    Column("embedding", LargeBinary, nullable=False),
    Column("dims", Integer, nullable=False),
    Column("last_used", Integer, nullable=False),
)
Index("idx_embedding_cache_last_used", embedding_cache.c.last_used)

events = Table(
    "events",
    metadata,
    Column("position", Integer, primary_key=True, autoincrement=True),
    Column("type", Text, nullable=False),
    Column("version", Integer, nullable=False),
    Column("data", Text, nullable=False),
    Column("occurred_at", Text, nullable=False),
    sqlite_autoincrement=True,
)

tracking = Table(
    "tracking",
    metadata,
    Column("handler", Text, primary_key=True),
    Column("position", Integer, nullable=False),
)

FTS_TABLE = "chunks_fts"
VEC_TABLE = "chunks_vec"


def create_fts_table(conn: Connection, tokenizer: str = FTS_TOKENIZER) -> None:
    """Create the keyword table: contentless FTS5 over the `terms` of each chunk (rowid = rid).

    Contentless (`content=''`) because the terms are derived from `chunks.text`, which is stored
    already; `contentless_delete=1` lets a file's rows be deleted by rowid.
    """
    quoted = tokenizer.replace("'", "''")
    conn.exec_driver_sql(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE} USING fts5("
        f"terms, content='', contentless_delete=1, tokenize='{quoted}')"
    )


def create_vec_table(conn: Connection, dimensions: int) -> None:
    """Create the sqlite-vec table for `dimensions`-float vectors compared by cosine distance."""
    conn.exec_driver_sql(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {VEC_TABLE} USING vec0("
        f"embedding float[{int(dimensions)}] distance_metric=cosine)"
    )


def table_exists(conn: Connection, name: str) -> bool:
    """Return whether a table (or virtual table) called `name` exists."""
    row = conn.exec_driver_sql(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
    ).first()
    return row is not None
