"""Adapter plumbing: the SQLite store's vector engine, made when a vector is first searched.

The engines' modules (vector_search.py and the code index behind it) load numpy, ~0.1 s of a
process's start that a command searching no vector (keyword-only, `get`, `events`, and `status`
of an index without a code file) never needs.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection

from memlane.adapters.store import code_file_place
from memlane.adapters.store.code_file_place import code_path, state_without_a_file
from memlane.adapters.store.vec0 import Vec0Table
from memlane.application.ports.embedding import Vector
from memlane.application.ports.index_store import VectorIndexState
from memlane.domain.search import TimeWindow
from memlane.domain.sources import Source

if TYPE_CHECKING:
    from memlane.adapters.store.vector_search import ScoredRid, VectorIndex, VectorSearch


class LazyVectorEngine:
    """The engine `kind` names, made once (under a lock: two threads' first searches, as in the
    daemon, make one engine) by the first call that needs it."""

    def __init__(self, kind: VectorSearch, table: Vec0Table, db_path: Path) -> None:
        self._kind = kind
        self._table = table
        self._db_path = db_path
        self._engine: VectorIndex | None = None
        self._lock = threading.Lock()

    def _made(self) -> VectorIndex:
        engine = self._engine
        if engine is None:
            from memlane.adapters.store.vector_search import vector_index

            with self._lock:
                engine = self._engine
                if engine is None:
                    engine = vector_index(self._kind, self._table, self._db_path)
                    self._engine = engine
        return engine

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
        """The engine's best (rid, cosine) pairs (see vector_search.VectorIndex.top)."""
        return self._made().top(
            conn, vector, dims=dims, model=model, sources=sources, limit=limit, window=window
        )

    def state(self, conn: Connection) -> VectorIndexState:
        """The engine and, for the code file, its state (for `status`).

        Without a code file (every index under `MIN_ROWS` vectors) and before this process made
        the engine, the state is counted in SQL: a `status` then loads no numpy."""
        if self._engine is None and self._kind == "codes" and not code_path(self._db_path).exists():
            return VectorIndexState(
                "codes", None, state_without_a_file(conn, code_file_place.MIN_ROWS)
            )
        from memlane.adapters.store.vector_code_index import CodeVectorIndex

        engine = self._made()
        if not isinstance(engine, CodeVectorIndex):
            return VectorIndexState(self._kind, None, "no index file (exact or vec0)")
        vectors, state = engine.state(conn)
        return VectorIndexState("codes", vectors, state)

    def invalidate(self) -> None:
        """Forget the engine's in-process state (the database file was replaced); nothing to
        forget before it was made."""
        if self._engine is not None:
            self._engine.invalidate()
