"""Adapter plumbing: an in-process float32 matrix of the stored vectors, for brute-force cosine.

Measured on this machine (bench/store_bench.py), a numpy matrix-vector product over 100k x 384
unit vectors answers a top-10 query several times faster than sqlite-vec's vec0 KNN scan. It is
the exact engine ("numpy"), the default engine's answer for small indexes and for the vectors
newer than its code file (vector_code_index.py), and needs no extension at all.

Freshness without re-reading everything: `chunks.rid` is never reused and a changed vector always
gets a new rid, so a refresh loads only rows with a rid above the highest one held, and marks dead
the rids listed in `vector_deletions` (a log every delete appends to, in the same transaction)
since the last refresh. The refresh runs only when the `vector_generation` counter in `meta`
(bumped by every write that touches vectors, in any process) or the file's `db_id` changed. A
full reload happens on first use, after a rebuild swap (new `db_id`), a dimension change, or when
the deletion log was pruned past what this matrix has seen.

With a `floor`, the matrix holds only rids above it: the exact "delta" next to a code file that
covers the rids up to the floor (vector_code_index.py).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection

FloatMatrix = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Hit:
    """One matrix row that scored: the chunk's rid and its cosine similarity."""

    rid: int
    score: float


class VectorMatrix:
    """Unit-normalised vectors of every chunk that has one, with their rid, model and source.

    Rows are appended in rid order into arrays with spare capacity; deleted rows become dead
    (masked) and are compacted away once they are a quarter of the rows.
    """

    def __init__(self, floor: int = 0) -> None:
        """Start empty; the first `refresh` loads every vector with a rid above `floor`."""
        self._floor = floor
        self._lock = threading.Lock()
        self._version: tuple[str, str] | None = None
        self._labels: dict[str, int] = {}
        self._reset(0)

    def _reset(self, dims: int) -> None:
        self._dims = dims
        self._count = 0
        self._dead = 0
        self._deletion_seq = 0
        self._rids: IntArray = np.zeros(0, dtype=np.int64)
        self._matrix: FloatMatrix = np.zeros((0, dims), dtype=np.float32)
        self._models: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)
        self._sources: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)
        self._alive: npt.NDArray[np.bool_] = np.zeros(0, dtype=bool)
        self._present_sources: frozenset[int] = frozenset()

    @property
    def count(self) -> int:
        """Live rows held."""
        return self._count - self._dead

    def invalidate(self, floor: int | None = None) -> None:
        """Forget everything (the file was replaced); hold only rids above `floor` from now."""
        with self._lock:
            if floor is not None:
                self._floor = floor
            self._version = None
            self._reset(self._dims)

    def _label(self, value: str) -> int:
        return self._labels.setdefault(value, len(self._labels))

    def refresh(self, conn: Connection, db_id: str, generation: str, dims: int) -> None:
        """Bring the matrix up to date with the database read through `conn`."""
        with self._lock:
            version = (db_id, generation)
            if version == self._version and dims == self._dims:
                return
            oldest = conn.exec_driver_sql("SELECT min(seq) FROM vector_deletions").scalar()
            full = (
                self._version is None
                or self._version[0] != db_id
                or dims != self._dims
                or (oldest is not None and int(oldest) > self._deletion_seq + 1 and self._count > 0)
            )
            if full:
                self._reset(dims)
                latest = conn.exec_driver_sql("SELECT max(seq) FROM vector_deletions").scalar()
                self._deletion_seq = 0 if latest is None else int(latest)
            else:
                self._apply_deletions(conn)
            self._load_new_rows(conn, dims)
            if self._dead * 4 > self._count:
                self._compact()
            live = self._sources[: self._count][self._alive[: self._count]]
            self._present_sources = frozenset(np.unique(live).tolist())
            self._version = version

    def _apply_deletions(self, conn: Connection) -> None:
        rows = conn.exec_driver_sql(
            "SELECT seq, rid FROM vector_deletions WHERE seq > ? ORDER BY seq",
            (self._deletion_seq,),
        ).all()
        if not rows:
            return
        self._deletion_seq = int(rows[-1][0])
        if not self._count:
            return
        rids = np.array([r[1] for r in rows], dtype=np.int64)
        held = self._rids[: self._count]
        where = np.searchsorted(held, rids)
        inside = where < self._count
        where, rids = where[inside], rids[inside]
        hit = where[held[where] == rids]
        newly_dead = hit[self._alive[hit]]
        self._alive[newly_dead] = False
        self._dead += len(newly_dead)

    def _grow(self, extra: int, dims: int) -> None:
        needed = self._count + extra
        if needed <= len(self._rids):
            return
        # Headroom, so that the next few writes append without copying the whole matrix.
        capacity = max(needed + needed // 8, int(len(self._rids) * 1.5), 1024)
        matrix = np.zeros((capacity, dims), dtype=np.float32)
        matrix[: self._count] = self._matrix[: self._count]
        self._matrix = matrix
        for name, dtype in (("_rids", np.int64), ("_models", np.int32), ("_sources", np.int32)):
            grown = np.zeros(capacity, dtype=dtype)
            grown[: self._count] = getattr(self, name)[: self._count]
            setattr(self, name, grown)
        alive = np.zeros(capacity, dtype=bool)
        alive[: self._count] = self._alive[: self._count]
        self._alive = alive

    def _load_new_rows(self, conn: Connection, dims: int) -> None:
        highest = int(self._rids[self._count - 1]) if self._count else self._floor
        highest = max(highest, self._floor)
        rows = conn.exec_driver_sql(
            "SELECT rid, model, source, embedding FROM chunks "
            "WHERE rid > ? AND embedding IS NOT NULL ORDER BY rid",
            (highest,),
        ).all()
        rows = [row for row in rows if len(row[3]) == dims * 4]
        if not rows:
            return
        block = np.frombuffer(b"".join(row[3] for row in rows), dtype="<f4").reshape(-1, dims)
        norms = np.linalg.norm(block, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        self._grow(len(rows), dims)
        start, end = self._count, self._count + len(rows)
        self._matrix[start:end] = block / norms
        self._rids[start:end] = [r[0] for r in rows]
        self._models[start:end] = [self._label(r[1]) for r in rows]
        self._sources[start:end] = [self._label(r[2]) for r in rows]
        self._alive[start:end] = True
        self._count = end

    def _compact(self) -> None:
        keep = self._alive[: self._count]
        self._matrix = np.ascontiguousarray(self._matrix[: self._count][keep])
        self._rids = self._rids[: self._count][keep]
        self._models = self._models[: self._count][keep]
        self._sources = self._sources[: self._count][keep]
        self._count = len(self._rids)
        self._alive = np.ones(self._count, dtype=bool)
        self._dead = 0

    def top(
        self,
        query: Sequence[float],
        model: str,
        sources: Sequence[str],
        k: int,
        *,
        rids: Sequence[int] | None = None,
    ) -> list[Hit]:
        """Return the `k` best live rows by cosine similarity among `model` and `sources`
        (and among `rids` when given)."""
        with self._lock:
            if k <= 0 or self._count == self._dead or model not in self._labels:
                return []
            wanted_sources = [self._labels[s] for s in sources if s in self._labels]
            if not wanted_sources:
                return []
            n = self._count
            q = np.asarray(query, dtype=np.float32)
            q = q / np.float32(np.linalg.norm(q))
            # einsum, not `@`: BLAS threads made a 2-core machine 10x slower on this matvec.
            scores = np.einsum("ij,j->i", self._matrix[:n], q)
            mask = (self._models[:n] == self._labels[model]) & self._alive[:n]
            if not self._present_sources <= set(wanted_sources):
                mask &= np.isin(self._sources[:n], wanted_sources)
            if rids is not None:
                mask &= np.isin(self._rids[:n], np.asarray(rids, dtype=np.int64))
            count = int(mask.sum())
            if count == 0:
                return []
            scores = np.where(mask, scores, -np.inf)
            k = min(k, count)
            best = np.argpartition(-scores, k - 1)[:k] if k < n else np.arange(n)
            best = best[np.argsort(-scores[best], kind="stable")]
            return [
                Hit(int(self._rids[i]), min(1.0, max(-1.0, float(scores[i]))))
                for i in best
                if np.isfinite(scores[i])
            ]
