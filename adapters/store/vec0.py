"""Adapter plumbing: the sqlite-vec (vec0) mirror of the chunk vectors and its KNN query.

The vec0 table holds each chunk's vector under the chunk's rid. Only a connection that loaded
sqlite-vec can touch it, so a process without the extension writes chunks (with their blobs) and
flags the table stale instead; the next process that has it rebuilds the table at open
(reconcile.py). The table's dimension is recorded in `meta` (`vector_dims`).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection

from memlane.adapters.store import meta_table, schema
from memlane.adapters.store.database import SqliteDatabase
from memlane.adapters.store.in_lists import placeholders
from memlane.application.ports.index_store import DimensionMismatch
from memlane.domain.index_meta import KEYWORD_ONLY_MODEL

# vec0 answers at most this many neighbours per KNN query.
_MAX_K = 4096


class Vec0Table:
    """The vec0 table of one database: kept in step with `chunks` when sqlite-vec is loaded."""

    def __init__(self, db: SqliteDatabase) -> None:
        """Mirror the chunk vectors of `db`."""
        self._db = db

    def loaded(self) -> bool:
        """Whether this process's connections have sqlite-vec."""
        return self._db.vector_status()[0]

    def ready(self, conn: Connection) -> bool:
        """Whether the table exists and this process can write it."""
        return self.loaded() and schema.table_exists(conn, schema.VEC_TABLE)

    def mark_stale(self, conn: Connection) -> None:
        """Flag the table as missing rows, for the next process with the extension to rebuild."""
        meta_table.put(conn, meta_table.VEC_STALE_KEY, "1")

    def insert(self, conn: Connection, rows: Sequence[tuple[int, bytes]]) -> None:
        """Add (rid, blob) rows, or flag the table stale when they cannot be written."""
        if not rows:
            return
        if self.ready(conn):
            conn.exec_driver_sql(
                f"INSERT INTO {schema.VEC_TABLE}(rowid, embedding) VALUES (?, ?)", rows
            )
        else:
            self.mark_stale(conn)

    def adopt_dims(self, conn: Connection, dims: int) -> None:
        """Record `dims` as the index's dimension and create the table for it."""
        meta_table.put(conn, meta_table.VECTOR_DIMS_KEY, str(dims))
        if self.loaded():
            schema.create_vec_table(conn, dims)
        else:
            self.mark_stale(conn)

    def ensure_dims(self, conn: Connection, dims: int | None) -> None:
        """Check `dims` against the index's (adopting it if none yet); DimensionMismatch if not."""
        if dims is None:
            return
        current = meta_table.vector_dims(conn)
        if current is None:
            self.adopt_dims(conn, dims)
        elif current != dims:
            raise DimensionMismatch(f"vectors have {dims} dimensions, the index has {current}")

    def change_dims(self, conn: Connection, dims: int) -> None:
        """Switch the index to `dims`: vectors of the old dimension are dropped, chunks stay."""
        current = meta_table.vector_dims(conn)
        if current is None:
            self.adopt_dims(conn, dims)
        elif current != dims:
            conn.exec_driver_sql(
                "UPDATE chunks SET embedding = NULL, model = ? WHERE embedding IS NOT NULL",
                (KEYWORD_ONLY_MODEL,),
            )
            if self.loaded() or not schema.table_exists(conn, schema.VEC_TABLE):
                conn.exec_driver_sql(f"DROP TABLE IF EXISTS {schema.VEC_TABLE}")
            self.adopt_dims(conn, dims)
            meta_table.bump_generation(conn)


def knn_top(
    conn: Connection, blob: bytes, model: str, sources: Sequence[str], limit: int
) -> list[tuple[int, float]]:
    """KNN through vec0, over-fetching until `limit` rows pass the model/source filter.

    Returns (rid, cosine similarity) pairs, best first.
    """
    total = int(conn.exec_driver_sql("SELECT count(*) FROM chunks_vec_rowids").scalar_one())
    k = max(limit * 4, 32)
    while True:
        k = min(k, _MAX_K, max(total, 1))
        rows = conn.exec_driver_sql(
            f"SELECT v.rowid, v.distance FROM {schema.VEC_TABLE} v "
            "JOIN chunks c ON c.rid = v.rowid "
            f"WHERE v.embedding MATCH ? AND k = ? AND c.model = ? "
            f"AND c.source IN ({placeholders(len(sources))}) ORDER BY v.distance",
            (blob, k, model, *sources),
        ).all()
        if len(rows) >= limit or k >= min(total, _MAX_K):
            return [(int(r[0]), 1.0 - float(r[1])) for r in rows[:limit]]
        k *= 4
