"""Adapter plumbing: the vector leg on pgvector (HNSW, cosine) and the agent's vector dimension.

The `embedding` column is an unsized `vector`, so agents with different models (384, 768,
1536... dimensions) share one table; each agent's dimension is recorded in its meta. An HNSW
index can only be built over a sized type, so there is one partial expression index per
dimension in use, `(embedding::vector(d)) WHERE dims = d`, created when an agent first adopts
that dimension and shared by every agent of that dimension (pgvector indexes at most 2,000
dimensions of `vector`; larger agents are served by an exact scan).

Filtering by agent, model and source happens after the index scan, which on its own would
starve a small agent in a big table (HNSW returns ef_search candidates, most of them someone
else's). pgvector 0.8's iterative index scan (`hnsw.iterative_scan = relaxed_order`) keeps
scanning until enough rows pass the filter. Relaxed order means the index may return rows
slightly out of order, so the leg fetches a pool larger than `limit` and re-scores it exactly:
cosine similarity in double precision from the stored vectors, then the best `limit`.

An agent with few chunks is scanned exactly instead (its rows sorted by distance, no index):
the graph is shared with every agent of the dimension and the scan over it is approximate, so
it can miss a small agent's rows outright. Seen in the tests: once other agents had added many
near-identical 4-dimension vectors, the iterative scan returned 3 of an agent's 4 rows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from sqlalchemy import Connection

from memlane.adapters.postgres import build_memory, meta, time_span
from memlane.adapters.postgres.database import driver_connection
from memlane.adapters.postgres.rows import keyword_stats, vectors_changed
from memlane.application.ports.embedding import Vector

if TYPE_CHECKING:  # pgvector is the `postgres` extra: imported when a vector is sent
    from pgvector import Vector as PgVector
from memlane.application.ports.index_store import DimensionMismatch
from memlane.domain.index_meta import KEYWORD_ONLY_MODEL
from memlane.domain.search import TimeWindow
from memlane.domain.sources import Source

HNSW_MAX_DIMS: Final = 2000
# Serialises CREATE INDEX of one dimension between hosts (any fixed key; see migrations.py).
_INDEX_LOCK_KEY: Final = 0x6D656D6C616E66
# At most this many chunks, an agent's vector leg is an exact scan of its rows, not HNSW.
EXACT_ROWS: Final = 5000


def to_wire(vector: Sequence[float]) -> PgVector:
    """Return `vector` as pgvector's value at float32 precision (what pgvector stores); it is
    sent in binary with a `%b` placeholder (database.py registers the adapters)."""
    from pgvector import Vector as PgVector

    return PgVector(np.asarray(vector, dtype=np.float32))


def from_wire(value: PgVector) -> list[float]:
    """Return the components of a vector read from the database."""
    values: list[float] = value.to_numpy().astype(np.float64).tolist()
    return values


def sample(conn: Connection, agent: str, model: str, limit: int) -> list[list[float]]:
    """The agent's first `limit` vectors of `model` by chunk id (the query background's sample:
    the same chunks for every query)."""
    return [
        from_wire(v)
        for (v,) in conn.exec_driver_sql(
            "SELECT embedding FROM memlane_chunks WHERE agent = %s AND model = %s "
            'AND embedding IS NOT NULL ORDER BY id COLLATE "C" LIMIT %s',
            (agent, model, limit),
        )
    ]


def _index_name(dims: int) -> str:
    return f"memlane_chunks_hnsw_{dims}"


def index_exists(conn: Connection, dims: int) -> bool:
    """Whether the HNSW index of `dims` exists (always True above HNSW_MAX_DIMS: none needed)."""
    if dims > HNSW_MAX_DIMS:
        return True
    found = conn.exec_driver_sql("SELECT to_regclass(%s) IS NOT NULL", (_index_name(dims),))
    return bool(found.scalar_one())


def _ensure_index(conn: Connection, dims: int) -> None:
    if dims > HNSW_MAX_DIMS:
        return
    conn.exec_driver_sql("SELECT pg_advisory_xact_lock(%s)", (_INDEX_LOCK_KEY,))
    # Checked under the lock: a later agent adopting a dimension whose index exists must not
    # pay the sizing's count of every row (nor hear a spill warning for a build that never runs).
    if index_exists(conn, dims):
        return
    # Building over rows already present (a bulk load that deferred it) is far faster with the
    # graph in memory: pgvector spills to a slower build once maintenance_work_mem is full.
    build_memory.set_for_build(conn, dims)
    conn.exec_driver_sql(
        f"CREATE INDEX IF NOT EXISTS {_index_name(dims)} ON memlane_chunks "
        f"USING hnsw ((embedding::vector({dims})) vector_cosine_ops) WHERE dims = {dims}"
    )


def adopt_dims(conn: Connection, agent: str, dims: int, *, build_index: bool = True) -> None:
    """Record `dims` as the agent's dimension and make sure its HNSW index exists, unless
    `build_index` is False: a bulk load into a dimension no agent uses yet builds the index
    once after its rows are in (`build_deferred_index`) rather than growing it row by row."""
    meta.put(conn, agent, meta.VECTOR_DIMS_KEY, str(dims))
    if build_index:
        _ensure_index(conn, dims)


def build_deferred_index(conn: Connection, dims: int) -> None:
    """Build the HNSW index of `dims` after a bulk load (a no-op if it exists)."""
    _ensure_index(conn, dims)


def ensure_dims(
    conn: Connection, agent: str, dims: int | None, *, build_index: bool = True
) -> None:
    """Check `dims` against the agent's (adopting it if none yet); DimensionMismatch if not."""
    if dims is None:
        return
    current = meta.vector_dims(conn, agent)
    if current is None:
        adopt_dims(conn, agent, dims, build_index=build_index)
    elif current != dims:
        raise DimensionMismatch(f"vectors have {dims} dimensions, the index has {current}")


def change_dims(conn: Connection, agent: str, dims: int) -> None:
    """Switch the agent to `dims`: its vectors of the old dimension are dropped, chunks stay."""
    current = meta.vector_dims(conn, agent)
    if current == dims:
        return
    if current is not None:
        conn.exec_driver_sql(
            "UPDATE memlane_chunks SET embedding = NULL, dims = NULL, model = %s "
            "WHERE agent = %s AND embedding IS NOT NULL",
            (KEYWORD_ONLY_MODEL, agent),
        )
        vectors_changed(conn, agent)
    adopt_dims(conn, agent, dims)


def _cosines(query: Sequence[float], stored: Sequence[PgVector]) -> np.ndarray:
    """Cosine of `query` with each stored vector, in double precision (0.0 for a zero vector)."""
    q = np.asarray(query, dtype=np.float32).astype(np.float64)
    m = np.stack([v.to_numpy() for v in stored]).astype(np.float64)
    norms = np.linalg.norm(m, axis=1) * float(np.linalg.norm(q))
    dots = m @ q
    safe = np.where(norms == 0.0, 1.0, norms)
    result: np.ndarray = np.where(norms == 0.0, 0.0, dots / safe)
    return result


def top(
    conn: Connection,
    agent: str,
    vector: Vector,
    *,
    dims: int,
    model: str,
    sources: Sequence[Source],
    limit: int,
    window: TimeWindow | None = None,
) -> list[tuple[int, float]]:
    """Return up to `limit` (rid, cosine) pairs of the agent, best first (see module docstring).

    With `window`, only chunks written within it count, strictly (see `_window_rows`).
    """
    pool = max(limit * 2, limit + 20)
    if window is None:
        rows = _index_scan(conn, agent, vector, dims, model, sources, pool, None)
    else:
        rows = _window_rows(conn, agent, vector, dims, model, sources, pool, window)
    if not rows:
        return []
    cosines = _cosines(vector, [row[1] for row in rows])
    scored = [
        (int(row[0]), float(s)) for row, s in zip(rows, cosines, strict=True) if math.isfinite(s)
    ]
    scored.sort(key=lambda pair: (-pair[1], pair[0]))
    return scored[:limit]


# A window holding at most this many of the agent's chunks is scored exactly from its rows (the
# server computes each one's distance and sorts them). Through HNSW a narrow window is a filter
# the index knows nothing of: the iterative scan gives up after `hnsw.max_scan_tuples` (20,000)
# index tuples, so a day a year back among 100,000 chunks came back with 22 of its 140
# (bench/time_filter_pg.py, session 11).
EXACT_WINDOW_ROWS: Final = 20_000


def _window_rows(
    conn: Connection,
    agent: str,
    vector: Vector,
    dims: int,
    model: str,
    sources: Sequence[Source],
    pool: int,
    window: TimeWindow,
) -> list[tuple[Any, Any]]:
    """The pool of the window's nearest rows: exact for a narrow window; through the index for
    a wide one, and exact again when the index comes back short of a pool it should fill."""
    bounds = time_span.bounds(conn, agent, window)
    held = conn.exec_driver_sql(
        "SELECT count(*) FROM (SELECT 1 FROM memlane_chunks WHERE agent = %s "
        "AND time_end >= %s AND time_start <= %s AND time_end <= %s LIMIT %s) s",
        (agent, *bounds, EXACT_WINDOW_ROWS + 1),
    ).scalar_one()
    if held > EXACT_WINDOW_ROWS:
        rows = _index_scan(conn, agent, vector, dims, model, sources, pool, bounds)
        if len(rows) >= pool:
            return rows
    with driver_connection(conn).cursor(binary=True) as cursor:
        # MATERIALIZED: the window's rows first (the time index), then ordered by their exact
        # distance, never through the HNSW index's approximate order.
        cursor.execute(
            "WITH w AS MATERIALIZED (SELECT rid, embedding FROM memlane_chunks "
            f"WHERE dims = {dims} AND agent = %s AND model = %s AND source = ANY(%s) "
            "AND time_end >= %s AND time_start <= %s AND time_end <= %s) "
            f"SELECT rid, embedding FROM w ORDER BY embedding::vector({dims}) <=> "
            f"%b::vector({dims}) LIMIT %s",
            (agent, model, list(sources), *bounds, to_wire(vector), pool),
        )
        return cursor.fetchall()


def _index_scan(
    conn: Connection,
    agent: str,
    vector: Vector,
    dims: int,
    model: str,
    sources: Sequence[Source],
    pool: int,
    bounds: tuple[float, float, float | None] | None,
) -> list[tuple[Any, Any]]:
    """The pool through the HNSW index, the filters applied by its iterative scan (`bounds`:
    a window's from time_span.bounds, or None); a small agent's rows are sorted exactly."""
    exact = keyword_stats(conn, agent)[0] <= EXACT_ROWS
    conn.exec_driver_sql(  # SET LOCAL of both settings in one round trip
        "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), "
        "set_config('hnsw.ef_search', %s, true)",
        (str(min(max(pool, 64), 1000)),),
    )
    # "+ 0" keeps the planner off the HNSW index (it serves only the bare distance).
    distance = f"embedding::vector({dims}) <=> %b::vector({dims})"
    distance = f"({distance}) + 0" if exact else distance
    # Binary results: the candidates' vectors arrive as float32 bytes, not decimal text.
    with driver_connection(conn).cursor(binary=True) as cursor:
        cursor.execute(
            f"SELECT rid, embedding FROM memlane_chunks WHERE dims = {dims} AND agent = %s "
            "AND model = %s AND source = ANY(%s) "
            + (
                ""
                if bounds is None
                else "AND time_end >= %s AND time_start <= %s AND time_end <= %s "
            )
            + f"ORDER BY {distance} LIMIT %s",
            (
                agent,
                model,
                list(sources),
                *(() if bounds is None else bounds),
                to_wire(vector),
                pool,
            ),
        )
        return cursor.fetchall()
