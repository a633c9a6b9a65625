"""Benchmark: the SQLite index store at 1k, 10k and 100k chunks of 384 dimensions.

Measures insert throughput (replace_file, 20 chunks per file), vector top-10 (numpy matrix, the
default, and sqlite-vec's vec0 KNN), keyword top-10 (FTS5 bm25), a hybrid pair (both legs), a
fused search (both legs + z-score fusion) at 24 and 200 candidates per leg, the file size and
the peak RSS. Each size runs in its own process so RSS is per size.

    .venv/bin/python bench/store_bench.py [--sizes 1000 10000 100000] [--queries 60]

Prints a table and writes bench/results/store_bench.json.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

DIMS = 384
CHUNKS_PER_FILE = 20
VOCABULARY = 20_000
WORDS_PER_CHUNK = 60


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 2),
    }


def _run_size(size: int, queries: int) -> dict[str, object]:
    import numpy as np

    from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
    from memlane.application.ports.index_store import IndexedFile
    from memlane.domain.chunks import Chunk, ChunkId, ContentHash
    from memlane.domain.keywords import build_fts_query
    from memlane.domain.scoring import zscore_merge
    from memlane.domain.sources import ALL_SOURCES

    rng = np.random.default_rng(42)
    words = np.array([f"w{i}" for i in range(VOCABULARY)])
    # Zipf-like word frequencies, so some keyword queries hit many chunks (the slow bm25 case).
    weights = 1.0 / np.arange(1, VOCABULARY + 1)
    weights /= weights.sum()

    tmp = Path(tempfile.mkdtemp(prefix="store-bench-"))
    path = tmp / "index.db"
    store = SqliteIndexStore.open(path)
    vectors = rng.standard_normal((size, DIMS)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)

    drawn = rng.choice(VOCABULARY, size=(size, WORDS_PER_CHUNK), p=weights)
    texts = [" ".join(words[row]) for row in drawn]

    start = time.perf_counter()
    for f in range(size // CHUNKS_PER_FILE):
        name = f"memory/file{f}.md"
        chunks = []
        for i in range(CHUNKS_PER_FILE):
            n = f * CHUNKS_PER_FILE + i
            text = texts[n]
            chunks.append(
                Chunk(
                    ChunkId(f"c{n}"),
                    "memory",
                    name,
                    i * 5 + 1,
                    i * 5 + 5,
                    text,
                    ContentHash(f"h{n}"),
                )
            )
        rows = vectors[f * CHUNKS_PER_FILE : (f + 1) * CHUNKS_PER_FILE].tolist()
        store.replace_file(
            IndexedFile("memory", name, ContentHash(f"f{f}"), 1.0, 100), chunks, rows, "m"
        )
    insert_seconds = time.perf_counter() - start

    queries_v = rng.standard_normal((queries, DIMS)).astype(np.float32)
    common = [str(w) for w in rng.choice(words[:50], queries // 2)]
    rare = [str(w) for w in rng.choice(words[1000:], queries - queries // 2)]
    keyword_queries = [build_fts_query(f"{a} {b}") or "" for a, b in zip(common, rare, strict=True)]
    keyword_queries += [build_fts_query(w) or "" for w in rare[: queries // 2]]

    cold = time.perf_counter()
    store.search_vector(queries_v[0].tolist(), model="m", sources=ALL_SOURCES, limit=10)
    cold_seconds = time.perf_counter() - cold

    def timed(fn: Callable[[Any], object], items: Sequence[Any]) -> list[float]:
        out = []
        for item in items:
            t = time.perf_counter()
            fn(item)
            out.append(time.perf_counter() - t)
        return out

    qv = [q.tolist() for q in queries_v]

    def brute_force(q: Any) -> object:
        """The limit for the vector leg: the store's kernel (einsum: one thread, no BLAS threads
        fighting other work for the 2 cores) and a top-10 over the same vectors, with no store
        around it (no ids, no row reads, no filters)."""
        scores = np.einsum("ij,j->i", vectors, q)
        top = np.argpartition(-scores, 10)[:10]
        return top[np.argsort(-scores[top])]

    vector_limit = timed(brute_force, list(queries_v))
    vector_numpy = timed(
        lambda q: store.search_vector(q, model="m", sources=ALL_SOURCES, limit=10), qv
    )
    vec0_store = SqliteIndexStore(store.database, vector_search="vec0")
    vector_vec0 = timed(
        lambda q: vec0_store.search_vector(q, model="m", sources=ALL_SOURCES, limit=10), qv[:20]
    )
    keyword = timed(
        lambda m: store.search_keyword(m, sources=ALL_SOURCES, limit=10), keyword_queries
    )
    keyword_filtered = timed(
        lambda m: store.search_keyword(m, sources=["memory"], limit=10), keyword_queries[:20]
    )
    pairs = list(zip(qv, keyword_queries, strict=False))
    hybrid = timed(
        lambda p: (
            store.search_vector(p[0], model="m", sources=ALL_SOURCES, limit=40),
            store.search_keyword(p[1], sources=ALL_SOURCES, limit=40),
        ),
        pairs,
    )

    def fused_search(pool: int) -> Callable[[tuple[list[float], str]], object]:
        """Both legs at `pool` candidates each, then the default z-score fusion: what a hybrid
        search costs before snippets (24 = maxResults 6 x 4; 200 = the minCandidates floor)."""

        def run(p: tuple[list[float], str]) -> object:
            vector = store.search_vector(p[0], model="m", sources=ALL_SOURCES, limit=pool)
            keyword = store.search_keyword(p[1], sources=ALL_SOURCES, limit=pool)
            return zscore_merge(vector, keyword, vector_weight=0.5, text_weight=0.5)

        return run

    fused_24 = timed(fused_search(24), pairs)
    fused_200 = timed(fused_search(200), pairs)
    # One file replaced, then a search: the matrix refresh is incremental.
    store.replace_file(
        IndexedFile("memory", "memory/file0.md", ContentHash("again"), 2.0, 100),
        [Chunk(ChunkId("again"), "memory", "memory/file0.md", 1, 2, "w1 w2", ContentHash("a"))],
        [vectors[0].tolist()],
        "m",
    )
    t = time.perf_counter()
    store.search_vector(qv[0], model="m", sources=ALL_SOURCES, limit=10)
    after_write = time.perf_counter() - t

    store.close()
    size_bytes = sum(p.stat().st_size for p in tmp.iterdir())
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for p in tmp.iterdir():
        p.unlink()
    tmp.rmdir()
    return {
        "chunks": size,
        "dims": DIMS,
        "insert_chunks_per_s": round(size / insert_seconds),
        "insert_seconds": round(insert_seconds, 1),
        "vector_top10_numpy": _percentiles(vector_numpy),
        "vector_top10_vec0": _percentiles(vector_vec0),
        "vector_top10_numpy_limit": _percentiles(vector_limit),
        "vector_first_query_ms": round(cold_seconds * 1000, 1),
        "vector_after_one_write_ms": round(after_write * 1000, 1),
        "keyword_top10": _percentiles(keyword),
        "keyword_top10_source_filtered": _percentiles(keyword_filtered),
        "hybrid_pair_top40": _percentiles(hybrid),
        "fused_search_pool24": _percentiles(fused_24),
        "fused_search_pool200": _percentiles(fused_200),
        "file_mb": round(size_bytes / 1e6, 1),
        "bytes_per_chunk": round(size_bytes / size),
        "peak_rss_mb": round(peak_kib / 1024, 1),
    }


def _table(results: list[dict[str, object]]) -> str:
    rows = [
        ("insert chunks/s", "insert_chunks_per_s"),
        ("vector top-10 numpy p50/p95 ms", "vector_top10_numpy"),
        ("vector top-10 vec0 p50/p95 ms", "vector_top10_vec0"),
        ("  limit: bare numpy top-10 p50/p95", "vector_top10_numpy_limit"),
        ("vector first query (cold) ms", "vector_first_query_ms"),
        ("vector after one write ms", "vector_after_one_write_ms"),
        ("keyword top-10 p50/p95 ms", "keyword_top10"),
        ("keyword (source filter) p50/p95", "keyword_top10_source_filtered"),
        ("hybrid pair p50/p95 ms", "hybrid_pair_top40"),
        ("fused search, 24/leg p50/p95 ms", "fused_search_pool24"),
        ("fused search, 200/leg p50/p95 ms", "fused_search_pool200"),
        ("file size MB", "file_mb"),
        ("file bytes per chunk", "bytes_per_chunk"),
        ("peak RSS MB", "peak_rss_mb"),
    ]
    header = f"{'metric':34}" + "".join(f"{r['chunks']:>18}" for r in results)
    lines = [header, "-" * len(header)]
    for label, key in rows:
        cells = []
        for r in results:
            value = r[key]
            if isinstance(value, dict):
                cells.append(f"{value['p50_ms']} / {value['p95_ms']}")
            else:
                cells.append(str(value))
        lines.append(f"{label:34}" + "".join(f"{c:>18}" for c in cells))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument(
        "--driver",
        choices=["sqlite", "postgres"],
        default="sqlite",
        help="postgres: PostgreSQL beside SQLite in one run (bench/pg_store_bench.py)",
    )
    args = parser.parse_args()
    if args.driver == "postgres":
        from memlane.bench.pg_store_bench import main as postgres_main

        postgres_main(["--sizes", *map(str, args.sizes), "--queries", str(args.queries)])
        return
    if args.one:
        print(json.dumps(_run_size(args.one, args.queries)))
        return
    results = []
    for size in args.sizes:
        out = subprocess.run(
            [sys.executable, __file__, "--one", str(size), "--queries", str(args.queries)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(_table(results))
    target = Path(__file__).parent / "results" / "store_bench.json"
    target.parent.mkdir(exist_ok=True)
    target.write_text(json.dumps({"machine_cores": 2, "results": results}, indent=2) + "\n")
    print(f"\nwritten {target}")
    if _plot(results, target.with_suffix(".png")):
        print(f"written {target.with_suffix('.png')}")


def _plot(results: list[dict[str, Any]], path: Path) -> bool:
    """Latency (p50) against corpus size, each leg beside its limit. False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    sizes = [r["chunks"] for r in results]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for key, label in (
        ("fused_search_pool200", "fused search (200/leg)"),
        ("hybrid_pair_top40", "both legs, top-40"),
        ("vector_top10_numpy", "vector top-10 (store)"),
        ("vector_top10_numpy_limit", "vector limit: bare numpy"),
        ("keyword_top10", "keyword top-10 (FTS5)"),
    ):
        ax.plot(sizes, [r[key]["p50_ms"] for r in results], marker="o", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("chunks (384 dims)")
    ax.set_ylabel("p50 (ms)")
    ax.set_title("index store latency vs corpus size")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


if __name__ == "__main__":
    main()
