"""Adapter plumbing: the SQLite schema's names and the DDL of its two derived virtual tables.

The tables themselves are created by the numbered migrations (`migrations.py`), each of which
carries its own literal DDL; nothing here changes what an old migration creates. The FTS5 and
vec0 tables are derived from `chunks` and may be dropped and rebuilt at open (`reconcile.py`) or
when the vector dimension changes, so their *current* DDL lives here.

`chunks.rid` is an AUTOINCREMENT integer key, never reused: the FTS5 row and the vec0 row of a
chunk carry the same rowid, so joins are rowid lookups, and an in-process vector matrix can be
refreshed incrementally (a new rid means a new or changed vector).
"""

from __future__ import annotations

from typing import Final

from sqlalchemy import Connection

from memlane.domain.keywords import FTS_TOKENIZER

FTS_TABLE: Final = "chunks_fts"
# What a chunk's keyword row analyses, as SQL over `chunks`: its heading trail and its text
# (Chunk.indexed_text), so a delete recomputes the very document the row was built from.
INDEXED_TEXT: Final = "CASE WHEN context = '' THEN text ELSE context || char(10) || text END"
VEC_TABLE: Final = "chunks_vec"


def create_fts_table(conn: Connection) -> None:
    """Create the keyword table: contentless FTS5 over the `terms` of each chunk (rowid = rid).

    Contentless (`content=''`) because the terms are derived from `chunks` (`INDEXED_TEXT`), which
    is stored already. Rows are deleted with FTS5's 'delete' command and the row's document
    (`rows.delete_rids`), not with `contentless_delete=1`: a DELETE on such a table leaves the
    deleted rows in the row count and token total bm25 reads (SQLite 3.50), so every edit would
    skew keyword scores away from a fresh index's.
    """
    quoted = FTS_TOKENIZER.replace("'", "''")
    conn.exec_driver_sql(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE} USING fts5("
        f"terms, content='', tokenize='{quoted}')"
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
