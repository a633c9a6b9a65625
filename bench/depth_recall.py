"""Benchmark: depth recall of the code-file engine (recall@200 against the exact top-200) as the
bit stage keeps more rows, with the query time, on a store kept by `bench/store_bench.py`.

    .venv/bin/python bench/depth_recall.py --where bench/work/stores/100000 --keeps 8000 16000 32000

Writes bench/results/<out>.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

from memlane.adapters.store import vector_code_index
from memlane.adapters.store.database import SqliteDatabase
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.domain.sources import ALL_SOURCES


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--where", type=Path, required=True)
    parser.add_argument("--keeps", type=int, nargs="+", default=[8000, 16000, 32000])
    parser.add_argument("--limit", type=int, default=200)
    parser.add_argument("--out", default="depth_recall")
    args = parser.parse_args()
    queries = [q.tolist() for q in np.load(args.where / "queries.npy")]
    exact_store = SqliteIndexStore(
        SqliteDatabase.open(args.where / "index.db", load_vector=False), vector_search="numpy"
    )
    exact = [
        {
            h.chunk_id
            for h in exact_store.search_vector(q, model="m", sources=ALL_SOURCES, limit=args.limit)
        }
        for q in queries
    ]
    exact_store.close()
    store = SqliteIndexStore(SqliteDatabase.open(args.where / "index.db", load_vector=False))
    original = vector_code_index.pool_sizes
    result: dict[str, object] = {"where": str(args.where), "limit": args.limit}
    for keep in args.keeps:
        vector_code_index.pool_sizes = lambda limit, keep=keep: (original(limit)[0], keep)  # type: ignore[misc]
        store.search_vector(queries[0], model="m", sources=ALL_SOURCES, limit=args.limit)  # warm
        times, found = [], 0
        for q, want in zip(queries, exact, strict=True):
            t = time.perf_counter()
            hits = store.search_vector(q, model="m", sources=ALL_SOURCES, limit=args.limit)
            times.append(time.perf_counter() - t)
            found += len(want & {h.chunk_id for h in hits})
        result[str(keep)] = {
            "recall": round(found / sum(len(w) for w in exact), 4),
            "p50_ms": round(statistics.median(times) * 1000, 1),
            "max_ms": round(max(times) * 1000, 1),
        }
        print(keep, result[str(keep)], flush=True)
    vector_code_index.pool_sizes = original
    store.close()
    target = Path(__file__).parent / "results" / f"{args.out}.json"
    target.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written {target}")


if __name__ == "__main__":
    main()
