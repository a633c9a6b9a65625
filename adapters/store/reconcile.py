"""Adapter plumbing: bring the derived tables (FTS5, vec0) in line with `chunks` at open.

Both are projections of `chunks`: the keyword table of each chunk's trail and text through the
domain's tokenizer, the vec0 table of the float32 blobs. When either no longer matches (the
tokenizer changed, or a process without sqlite-vec wrote vectors), it is dropped and rebuilt here.
"""

from __future__ import annotations

from sqlalchemy import Connection

from memlane.adapters.store import meta_table, schema
from memlane.domain.keywords import FTS_DOCUMENT_VERSION, FTS_TOKENIZER, fts_document


def _keyword_table_outdated(conn: Connection) -> bool:
    """The keyword table was built by another tokenizer or another `fts_document`."""
    return (
        meta_table.get(conn, meta_table.TOKENIZER_KEY) != FTS_TOKENIZER
        or meta_table.get(conn, meta_table.FTS_DOCUMENT_KEY) != FTS_DOCUMENT_VERSION
    )


def rebuild_keyword_table(conn: Connection) -> None:
    """Drop the keyword table and build it again from each chunk's trail and text with today's
    analysis."""
    conn.exec_driver_sql(f"DROP TABLE IF EXISTS {schema.FTS_TABLE}")
    schema.create_fts_table(conn)
    rows = conn.exec_driver_sql(f"SELECT rid, {schema.INDEXED_TEXT} FROM chunks").all()
    conn.exec_driver_sql(
        f"INSERT INTO {schema.FTS_TABLE}(rowid, terms) VALUES (?, ?)",
        [(rid, fts_document(text)) for rid, text in rows],
    )
    meta_table.put(conn, meta_table.TOKENIZER_KEY, FTS_TOKENIZER)
    meta_table.put(conn, meta_table.FTS_DOCUMENT_KEY, FTS_DOCUMENT_VERSION)


def needs_reconcile(conn: Connection, vector_loaded: bool) -> bool:
    """Return whether `reconcile` has work to do (checked cheaply in a read transaction)."""
    if _keyword_table_outdated(conn):
        return True
    if not vector_loaded:
        return False
    if meta_table.get(conn, meta_table.VECTOR_DIMS_KEY) is None:
        return False
    return meta_table.get(conn, meta_table.VEC_STALE_KEY) == "1" or not schema.table_exists(
        conn, schema.VEC_TABLE
    )


def reconcile(conn: Connection, vector_loaded: bool) -> None:
    """Rebuild what is out of date.

    * the FTS tokenizer or the document analysis changed since the keyword table was built:
      rebuild it from the chunks (its rows could not be deleted exactly otherwise);
    * a process without sqlite-vec wrote vectors (flagged stale) or the vec table is missing:
      rebuild the vec table from the float32 blobs in `chunks`.
    """
    if _keyword_table_outdated(conn):
        rebuild_keyword_table(conn)
    dims = meta_table.vector_dims(conn)
    if not vector_loaded or dims is None:
        return
    stale = meta_table.get(conn, meta_table.VEC_STALE_KEY) == "1"
    if stale or not schema.table_exists(conn, schema.VEC_TABLE):
        conn.exec_driver_sql(f"DROP TABLE IF EXISTS {schema.VEC_TABLE}")
        schema.create_vec_table(conn, dims)
        conn.exec_driver_sql(
            f"INSERT INTO {schema.VEC_TABLE}(rowid, embedding) "
            "SELECT rid, embedding FROM chunks WHERE embedding IS NOT NULL"
        )
        meta_table.put(conn, meta_table.VEC_STALE_KEY, "0")
