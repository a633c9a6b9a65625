"""Adapter plumbing: the default vector engine — a memory-mapped code file plus an exact delta.

Chosen over an HNSW graph and a flat int8 scan by bench/studies/vector_options.py
(bench/RESULTS.md, "A
million chunks"): a fresh process answers from the mapped file without loading the vectors,
filters (model, sources) and deletions are plain masks, no new dependency, and a build is one
sequential pass.

A query, for `limit` results:

1. Hamming scan of the 1-bit codes of every live, matching row; keep the best
   max(20 * pool, 4000) (`pool` = max(2 * limit, 200));
2. int8 estimate for those; keep the best `pool`;
3. exact float32 cosine of those `pool` rows, read from SQLite in the caller's transaction with the
   model and source filter re-checked there: every score returned is the exact one, and a row
   deleted or changed since the file was built cannot come back;
4. the delta — vectors with a rid above the file's `high_rid`, held exactly in memory
   (VectorMatrix with a floor) — scored exactly and merged.

So the only possible difference from the exact scan is a true neighbour missed by stages 1-2
(recall@10 is measured in bench/RESULTS.md); the scores and the order of what is found are exact.

Below `min_rows` vectors no file is built and the delta matrix holds everything (the exact
engine: loading that few is cheaper than any index). The file is rebuilt, with a log line saying
why, when it is missing or stale (vector_codes.stale_reason) or when the delta or the deleted rows
outgrow a fraction of it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import structlog
from sqlalchemy import Connection

from memlane.adapters.store import code_file_place, meta_table, rows
from memlane.adapters.store.code_file_place import code_path, state_without_a_file
from memlane.adapters.store.in_lists import batches, placeholders
from memlane.adapters.store.vector_codes import (
    UNREACHABLE,
    CodeFile,
    build,
    stale_reason,
)
from memlane.adapters.store.vector_matrix import VectorMatrix
from memlane.application.ports.embedding import Vector
from memlane.domain.search import TimeWindow
from memlane.domain.sources import Source

log = structlog.get_logger()

POOL_FLOOR = 200
BITS_FLOOR = 4_000
# Rebuild once the exact delta or the dead rows exceed this fraction of the file.
_REBUILD_FRACTION = 0.2


def pool_sizes(limit: int) -> tuple[int, int]:
    """(rows re-scored exactly, rows kept by the Hamming scan) for a query of `limit`."""
    pool = max(2 * limit, POOL_FLOOR)
    return pool, max(20 * pool, BITS_FLOOR)


def _smallest(dist: Any, count: int) -> Any:
    """Sorted positions of (at least) the `count` smallest reachable distances."""
    histogram = np.bincount(dist, minlength=int(UNREACHABLE) + 1)
    reachable = int(histogram[: int(UNREACHABLE)].sum())
    if reachable <= count:
        return np.flatnonzero(dist < UNREACHABLE)
    # The distance at which `count` rows are covered: a histogram pass instead of a partition.
    cut = int(np.searchsorted(np.cumsum(histogram), count))
    return np.flatnonzero(dist <= cut)


class CodeVectorIndex:
    """Vector top-k from the code file beside `db_path`, exact delta, exact float32 re-scoring."""

    def __init__(self, db_path: Path, *, min_rows: int | None = None) -> None:
        """Serve the database at `db_path`; build no file below `min_rows`
        (`code_file_place.MIN_ROWS`) vectors."""
        self._db_path = db_path
        self._min_rows = code_file_place.MIN_ROWS if min_rows is None else min_rows
        self._lock = threading.Lock()
        self._file: CodeFile | None = None
        self._delta = VectorMatrix()
        self._version: tuple[str, str, int] | None = None
        # (db_id, dims) whose file was last looked for: an exact-mode index looks once, not on
        # every write, and its delta matrix then refreshes incrementally like the numpy engine.
        self._checked: tuple[str, int] | None = None
        self._floor = 0
        self._deletion_seq = 0
        self._alive: Any = np.zeros(0, dtype=bool)
        self._dead = 0
        self._excluded: dict[tuple[str, tuple[str, ...]], Any] = {}
        self.last_event: str | None = None  # what the last refresh did to the file, for status

    def state(self, conn: Connection) -> tuple[int | None, str]:
        """(vectors the file covers, what this process did with it or what it would do), for
        `status`: reads the file's header and checks it against the database, builds nothing."""
        with self._lock:
            if self._file is not None and self.last_event is not None:
                return self._file.header.count, self.last_event
            last = self.last_event
        opened = CodeFile.open(code_path(self._db_path))
        dims = meta_table.vector_dims(conn)
        if opened is None or dims is None:
            return None, last or state_without_a_file(conn, self._min_rows)
        db_id = meta_table.get_many(conn, [meta_table.DB_ID_KEY]).get(meta_table.DB_ID_KEY, "")
        why = stale_reason(conn, opened.header, db_id, dims)
        if why is not None:
            return opened.header.count, f"stale: {why} (rebuilt by the next search)"
        behind = int(
            conn.exec_driver_sql(
                "SELECT count(*) FROM chunks WHERE rid > ? AND embedding IS NOT NULL",
                (opened.header.high_rid,),
            ).scalar_one()
        )
        return opened.header.count, f"built, {behind} newer vectors searched exactly"

    def invalidate(self) -> None:
        """Forget the file and the delta (the database file was replaced)."""
        with self._lock:
            self._drop()

    def _drop(self) -> None:
        self._file = None
        self._version = None
        self._checked = None
        self._excluded = {}
        self._delta.invalidate(floor=0)
        self._floor = 0

    # --- freshness -----------------------------------------------------------------------------

    def _adopt(self, opened: CodeFile) -> None:
        self._file = opened
        self._alive = np.ones(opened.header.count, dtype=bool)
        self._dead = 0
        self._deletion_seq = opened.header.deletion_seq
        self._delta.invalidate(floor=opened.header.high_rid)
        self._floor = opened.header.high_rid

    def _rebuild(self, conn: Connection, db_id: str, dims: int, why: str) -> None:
        log.info(
            "vector index: building the code file", path=str(code_path(self._db_path)), reason=why
        )
        self.last_event = f"rebuilt: {why}"
        self._adopt(build(conn, self._db_path, db_id, dims))

    def _open_or_build(
        self, conn: Connection, db_id: str, dims: int, *, vectors: int | None = None
    ) -> None:
        """Adopt a valid file on disk (another process may have built it), else build one, or
        stay exact below `min_rows` vectors."""
        self._checked = (db_id, dims)
        path = code_path(self._db_path)
        opened = CodeFile.open(path)
        why: str | None
        if opened is None:  # a file there is torn, foreign or of an older layout (no times)
            why = "an unreadable or older-layout code file" if path.exists() else "no code file"
        else:
            why = stale_reason(conn, opened.header, db_id, dims)
        if opened is not None and why is None:
            self._adopt(opened)
            self.last_event = "opened"
            return
        if vectors is None:
            vectors = int(
                conn.exec_driver_sql(
                    "SELECT count(*) FROM chunks WHERE embedding IS NOT NULL"
                ).scalar_one()
            )
        if vectors < self._min_rows:
            if self._file is not None or self._floor != 0:
                self._file = None
                self._delta.invalidate(floor=0)
                self._floor = 0
            self.last_event = f"exact: {vectors} vectors, below {self._min_rows}"
            return
        self._rebuild(conn, db_id, dims, why or "stale")

    def _apply_deletions(self, conn: Connection) -> None:
        if self._file is None:
            return
        rows = conn.exec_driver_sql(
            "SELECT seq, rid FROM vector_deletions WHERE seq > ? ORDER BY seq",
            (self._deletion_seq,),
        ).all()
        if not rows:
            return
        self._deletion_seq = int(rows[-1][0])
        held = self._file.rids
        rids = np.array([r[1] for r in rows], dtype=np.int64)
        where = np.searchsorted(held, rids)
        inside = where < len(held)
        where, rids = where[inside], rids[inside]
        hit = where[np.asarray(held[where]) == rids]
        newly = hit[self._alive[hit]]
        self._alive[newly] = False
        self._dead += len(newly)

    def _refresh(self, conn: Connection, dims: int) -> None:
        state = meta_table.get_many(conn, [meta_table.DB_ID_KEY, meta_table.GENERATION_KEY])
        db_id = state.get(meta_table.DB_ID_KEY, "")
        version = (db_id, state.get(meta_table.GENERATION_KEY, "0"), dims)
        if version == self._version:
            return
        self._excluded = {}
        header = None if self._file is None else self._file.header
        if self._checked != (db_id, dims) or (
            header is not None and (header.db_id != db_id or header.dims != dims)
        ):
            self._open_or_build(conn, db_id, dims)
        elif header is not None:
            oldest = conn.exec_driver_sql("SELECT min(seq) FROM vector_deletions").scalar()
            if oldest is not None and int(oldest) > self._deletion_seq + 1:
                self._rebuild(conn, db_id, dims, "the deletion log was pruned past this process")
        self._apply_deletions(conn)
        self._delta.refresh(conn, db_id, version[1], dims)
        if self._file is None and self._delta.count >= self._min_rows:
            self._open_or_build(conn, db_id, dims, vectors=self._delta.count)
            self._catch_up(conn, db_id, version[1], dims)
        elif self._file is not None:
            limit = max(self._min_rows, int(_REBUILD_FRACTION * self._file.header.count))
            if self._delta.count > limit or self._dead > limit:
                why = f"{self._delta.count} new and {self._dead} deleted vectors since the build"
                self._rebuild(conn, db_id, dims, why)
                self._catch_up(conn, db_id, version[1], dims)
        self._version = version

    def _catch_up(self, conn: Connection, db_id: str, generation: str, dims: int) -> None:
        """After adopting a file: mask its deleted rows and load the rows it does not cover."""
        self._apply_deletions(conn)
        self._delta.refresh(conn, db_id, generation, dims)

    # --- query ---------------------------------------------------------------------------------

    def _exclusion(self, model: str, sources: Sequence[Source]) -> Any:
        """Positions the scan must skip: dead, another model, or a source not asked for."""
        key = (model, tuple(sorted(sources)))
        cached = self._excluded.get(key)
        if cached is not None:
            return cached
        assert self._file is not None
        header = self._file.header
        ok = self._alive.copy()
        if model in header.models:
            ok &= np.asarray(self._file.models) == header.models.index(model)
        else:
            ok[:] = False
        wanted = [i for i, s in enumerate(header.sources) if s in sources]
        if len(wanted) < len(header.sources):
            ok &= np.isin(np.asarray(self._file.sources), wanted)
        excluded = np.flatnonzero(~ok)
        self._excluded[key] = excluded
        return excluded

    def _window_rows(self, model: str, sources: Sequence[Source], window: TimeWindow) -> Any:
        """Mask of the file rows the scan may return that lie within `window` (from the time
        arrays: an undated row, NaN, fails both comparisons)."""
        assert self._file is not None
        since, until = window.bounds()
        inside = np.asarray(self._file.time_end) >= since
        inside &= np.asarray(self._file.time_start) <= until
        inside[self._exclusion(model, sources)] = False
        return inside

    def _delta_in_window(self, conn: Connection, window: TimeWindow) -> list[int]:
        """Rids of the delta's rows (above the file's `high_rid`) within `window`."""
        if self._file is None:  # the delta holds every vector: the time index finds the window
            return rows.rids_in_window(conn, window)
        if self._delta.count == 0:
            return []
        since, until = window.bounds()
        # NOT INDEXED: the rid range (the few rows written since the build), not the time index
        # (every row of a wide window).
        found = conn.exec_driver_sql(
            "SELECT rid FROM chunks NOT INDEXED WHERE rid > ? AND time_end >= ? "
            "AND time_start <= ?",
            (self._floor, since, until),
        )
        return [int(r[0]) for r in found]

    def _file_candidates(
        self, q: Any, model: str, sources: Sequence[Source], limit: int, inside: Any = None
    ) -> Any:
        """Rids of the `pool` best file rows by the int8 estimate (steps 1-2), among the rows
        of the mask `inside` when given."""
        assert self._file is not None
        excluded = self._exclusion(model, sources)
        if len(excluded) == self._file.header.count:
            return np.zeros(0, dtype=np.int64)
        pool, keep = pool_sizes(limit)
        dist = self._file.hamming(q)
        dist[excluded] = UNREACHABLE
        if inside is not None:
            dist[~inside] = UNREACHABLE
        rows = _smallest(dist, keep)
        if len(rows) > pool:
            estimate = self._file.approximate(q, rows)
            rows = np.sort(rows[np.argpartition(-estimate, pool - 1)[:pool]])
        return np.asarray(self._file.rids[rows])

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
    ) -> list[tuple[int, float]]:
        """Return up to `limit` (rid, exact cosine) pairs, best first (see VectorIndex).

        Within `window`: when it holds few rows (at most the scan's keep), every one is scored
        exactly (no code stage can then miss a neighbour); else the file's rows are masked by
        its time arrays and the delta's read by rid range.
        """
        q = np.asarray(vector, dtype=np.float32)
        q = q / np.float32(np.linalg.norm(q))
        keep = pool_sizes(limit)[1]
        if window is not None and rows.window_rows_at_most(conn, window, keep + 1) <= keep:
            # A narrow window: its rids from the time index (a capped count first, ~1 ms),
            # cheaper than masking the whole file (~5 ms at 1M rows).
            few = rows.rids_in_window(conn, window)
            return _best(exact_scores(conn, q, few, model, sources, dims, window), limit)
        with self._lock:
            self._refresh(conn, dims)
            inside = delta_rids = None
            if window is not None:
                delta_rids = self._delta_in_window(conn, window)
                inside = None if self._file is None else self._window_rows(model, sources, window)
                held = 0 if inside is None else int(np.count_nonzero(inside))
                if held + len(delta_rids) <= keep:  # many rows, few of this model and sources
                    few = delta_rids
                    if self._file is not None:
                        few = few + np.asarray(self._file.rids)[inside].tolist()
                    return _best(exact_scores(conn, q, few, model, sources, dims, window), limit)
            hits = self._delta.top(vector, model, sources, limit, rids=delta_rids)
            scored = [(h.rid, h.score) for h in hits]
            if self._file is not None:
                found = self._file_candidates(q, model, sources, limit, inside)
                scored += exact_scores(conn, q, found.tolist(), model, sources, dims, window)
        return _best(scored, limit)


def _best(scored: list[tuple[int, float]], limit: int) -> list[tuple[int, float]]:
    scored.sort(key=lambda pair: (-pair[1], pair[0]))
    return scored[:limit]


def exact_scores(
    conn: Connection,
    q: Any,
    rids: Sequence[int],
    model: str,
    sources: Sequence[Source],
    dims: int,
    window: TimeWindow | None = None,
) -> list[tuple[int, float]]:
    """Exact float32 cosines of the rows `rids` that still exist with `model`, in `sources`
    (and within `window`, checked again on the rows of record).

    Same arithmetic as the exact matrix (row / its norm, then einsum with the unit query), so a
    row scores the same here as there.
    """
    found: list[tuple[int, bytes]] = []
    marks = placeholders(len(sources))
    timed = "" if window is None else " AND time_end >= ? AND time_start <= ?"
    bounds = () if window is None else window.bounds()
    for batch in batches(rids):
        found += conn.exec_driver_sql(
            f"SELECT rid, embedding FROM chunks WHERE rid IN ({placeholders(len(batch))}) "
            f"AND embedding IS NOT NULL AND model = ? AND source IN ({marks}){timed}",
            (*batch, model, *sources, *bounds),
        ).all()
    found = [(int(r), b) for r, b in found if len(b) == dims * 4]
    if not found:
        return []
    found.sort()
    block = np.frombuffer(b"".join(b for _, b in found), dtype="<f4").reshape(-1, dims)
    norms = np.linalg.norm(block, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    scores = np.einsum("ij,j->i", block / norms, q)
    return [(rid, min(1.0, max(-1.0, float(s)))) for (rid, _), s in zip(found, scores, strict=True)]
