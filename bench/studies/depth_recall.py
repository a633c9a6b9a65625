"""Benchmark: depth recall of the code-file engine (recall@200 against the exact top-200) as the
bit stage keeps more rows, with the query time, on a store kept by `bench/store_bench.py`.

    .venv/bin/python bench/studies/depth_recall.py --where bench/work/stores/100000 --keeps 8000 \
        16000 32000

Or on real vectors, the store's own engine at any keep (the file is forced below the store's
20,000-vector threshold): `--build-from DIR` first fills `--where` with the vectors of a
`bench/studies/vector_options.py --data real` work dir (f32.npy: the corpus, queries.npy: held-out
queries), 20 chunks per file through `replace_file`:

    .venv/bin/python bench/studies/depth_recall.py --where bench/work/depth-real \
        --build-from bench/work/vector-options/real-100000 --limit 10 --keeps 55 110 220 440 4000

Writes bench/results/<out>.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

from memlane.adapters.store import code_file_place, vector_code_index
from memlane.adapters.store.database import SqliteDatabase
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.application.ports.index_store import IndexedFile
from memlane.domain.chunks import Chunk, ChunkId, ContentHash
from memlane.domain.sources import ALL_SOURCES


def _build_from(source: Path, where: Path) -> None:
    """Fill `where`/index.db with the corpus of a vector_options work dir; copy its queries."""
    corpus = np.load(source / "f32.npy")
    np.save(where / "queries.npy", np.load(source / "queries.npy"))
    store = SqliteIndexStore(SqliteDatabase.open(where / "index.db", load_vector=False))
    for first in range(0, len(corpus), 20):
        block = corpus[first : first + 20]
        name = f"memory/file{first // 20}.md"
        chunks = [
            Chunk(ChunkId(f"c{first + i}"), "memory", name, i * 5 + 1, i * 5 + 5,
                  f"row {first + i}", ContentHash(f"h{first + i}"))
            for i in range(len(block))
        ]  # fmt: skip
        file = IndexedFile("memory", name, ContentHash(f"f{first}"), 1.0, 100)
        store.replace_file(file, chunks, block.tolist(), "m")
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--where", type=Path, required=True)
    parser.add_argument("--keeps", type=int, nargs="+", default=[8000, 16000, 32000])
    parser.add_argument("--limit", type=int, default=200)
    parser.add_argument("--out", default="depth_recall")
    parser.add_argument("--build-from", type=Path, help="a vector_options real work dir")
    args = parser.parse_args()
    if args.build_from is not None and not (args.where / "index.db").exists():
        args.where.mkdir(parents=True, exist_ok=True)
        _build_from(args.build_from, args.where)
    # The code file at any size (no-op for a store above the threshold).
    code_file_place.MIN_ROWS = 0
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
    result: dict[str, object] = {
        "where": str(args.where),
        "limit": args.limit,
        "pool": original(args.limit)[0],
    }
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
    target = Path(__file__).parent.parent / "results" / f"{args.out}.json"
    target.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written {target}")


if __name__ == "__main__":
    main()
