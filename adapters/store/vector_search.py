"""Adapter plumbing: the vector leg's top-k, behind one small interface with three engines.

`VectorIndex` is what the store asks of a vector engine: the best (rid, cosine) pairs for a
query, and to forget in-process state when the file is swapped. The engines:

* `CodeVectorIndex` (default, "codes"): a memory-mapped 1-bit + int8 code file beside the
  database, candidates re-scored with the exact float32 cosines from SQLite, new vectors held
  exactly in memory until the file is rebuilt (vector_code_index.py); a fresh process does not
  load the vectors, so it answers at a million chunks in well under a second;
* `MatrixVectorIndex` ("numpy"): brute force over an in-process matrix refreshed
  incrementally from the database (vector_matrix.py); exact, but every process loads every
  vector (1.9 s and ~1 GB at 100k chunks);
* `Vec0VectorIndex` ("vec0"): sqlite-vec's KNN, falling back to the matrix while the vec0 table
  cannot be used (extension missing, or the table is stale).

Both read inside the caller's transaction, so they see the same snapshot as the rows they rank.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal, Protocol, TypeAlias

from sqlalchemy import Connection

from memlane.adapters.store import meta_table, rows, vec0
from memlane.adapters.store.vec0 import Vec0Table
from memlane.adapters.store.vector_code_index import CodeVectorIndex
from memlane.adapters.store.vector_codec import to_blob
from memlane.adapters.store.vector_matrix import VectorMatrix
from memlane.application.ports.embedding import Vector
from memlane.domain.search import TimeWindow
from memlane.domain.sources import Source

VectorSearch = Literal["codes", "numpy", "vec0"]
ScoredRid: TypeAlias = tuple[int, float]


class VectorIndex(Protocol):
    """Top-k cosine similarity over the vectors stored with the chunks of one database."""

    def top(
        self,
        conn: Connection,
        vector: Vector,
        *,
        dims: int,
        model: str,
        sources: Sequence[Source],
        limit: int,
        window: TimeWindow | None = None,
    ) -> list[ScoredRid]:
        """Return up to `limit` (rid, cosine) pairs, best first.

        Only chunks whose vector was made by `model`, in `sources`, count, and with `window`
        only those written within it (chosen before the top k). `vector` is finite, non-zero and
        has the index's `dims` (the store checks this before asking).
        """
        ...

    def invalidate(self) -> None:
        """Forget in-process state (the database file was replaced)."""
        ...


class MatrixVectorIndex:
    """Brute-force cosine over an in-process float32 matrix of every stored vector."""

    def __init__(self) -> None:
        """Start empty; the first query loads the matrix."""
        self._matrix = VectorMatrix()

    def top(
        self,
        conn: Connection,
        vector: Vector,
        *,
        dims: int,
        model: str,
        sources: Sequence[Source],
        limit: int,
        window: TimeWindow | None = None,
    ) -> list[ScoredRid]:
        """Refresh the matrix if the database changed, then rank (see VectorIndex)."""
        rids = None
        if window is not None:  # the window's rows from the time index, then the top k of them
            rids = rows.rids_in_window(conn, window)
            if not rids:
                return []
        state = meta_table.get_many(conn, [meta_table.DB_ID_KEY, meta_table.GENERATION_KEY])
        self._matrix.refresh(
            conn,
            state.get(meta_table.DB_ID_KEY, ""),
            state.get(meta_table.GENERATION_KEY, "0"),
            dims,
        )
        hits = self._matrix.top(vector, model, sources, limit, rids=rids)
        return [(hit.rid, hit.score) for hit in hits]

    def invalidate(self) -> None:
        """Drop the matrix; the next query reloads it."""
        self._matrix.invalidate()


class Vec0VectorIndex:
    """sqlite-vec KNN over the vec0 mirror, or the matrix while that mirror is unusable."""

    def __init__(self, table: Vec0Table) -> None:
        """Query `table`; keep a matrix for when it cannot be used."""
        self._table = table
        self._fallback = MatrixVectorIndex()

    def top(
        self,
        conn: Connection,
        vector: Vector,
        *,
        dims: int,
        model: str,
        sources: Sequence[Source],
        limit: int,
        window: TimeWindow | None = None,
    ) -> list[ScoredRid]:
        """Rank through vec0 when its table is ready (see VectorIndex)."""
        if window is not None or not self._table.ready(conn):
            # vec0's KNN cannot be restricted to a row set: the exact matrix ranks a window.
            return self._fallback.top(
                conn, vector, dims=dims, model=model, sources=sources, limit=limit, window=window
            )
        return vec0.knn_top(conn, to_blob(vector), model, sources, limit)

    def invalidate(self) -> None:
        """Drop the fallback matrix."""
        self._fallback.invalidate()


def vector_index(kind: VectorSearch, table: Vec0Table, db_path: Path) -> VectorIndex:
    """Return the engine named by the `vector_search` setting."""
    if kind == "vec0":
        return Vec0VectorIndex(table)
    if kind == "numpy":
        return MatrixVectorIndex()
    return CodeVectorIndex(db_path)
