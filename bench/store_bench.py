"""Benchmark: the SQLite index store from 1k to 1M chunks of 384 dimensions.

Measures insert throughput (replace_file, 20 chunks per file), vector top-10 (the default code-
file engine, the exact numpy matrix and sqlite-vec's vec0 KNN), keyword top-10 (FTS5 bm25), a
hybrid pair (both legs), a fused search (both legs + z-score fusion) at 24 and 200 candidates per
leg, the file size and the peak RSS. Each size is built in its own process; then each vector
engine is timed in a FRESH process of its own ("search process": cold first fused search =
open + first query, warm percentiles, its RSS high-water mark), which is what a CLI search pays.
Vectors are clustered and anisotropic like sentence embeddings (a shared direction, one of
n/100 cluster directions, noise); recall@10 of the code-file engine is against the exact engine.

    .venv/bin/python bench/store_bench.py [--sizes 1000 10000 100000] [--queries 60]
    .venv/bin/python bench/store_bench.py --sizes 1000000 --queries 20 --bulk --out store_bench_1m

Prints a table and writes bench/results/<out>.json (default store_bench.json).
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


def clustered_vectors(n: int, rng: Any) -> Any:
    """Unit vectors shaped like sentence embeddings: a shared direction (random e5 pairs score
    ~0.7), one of n/100 cluster directions, and noise."""
    import numpy as np

    common = rng.standard_normal(DIMS)
    common /= np.linalg.norm(common)
    centers = rng.standard_normal((max(n // 100, 10), DIMS)).astype(np.float32)
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    out = np.empty((n, DIMS), dtype=np.float32)
    for start in range(0, n, 100_000):
        m = min(100_000, n - start)
        noise = rng.standard_normal((m, DIMS)).astype(np.float32) / np.sqrt(DIMS)
        block = 0.8 * common + 0.45 * centers[rng.integers(0, len(centers), m)] + 0.4 * noise
        out[start : start + m] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def _build(size: int, queries: int, where: Path, bulk: bool) -> dict[str, object]:
    """Fill a store of `size` chunks in `where`; save the queries; time the inserts.

    `bulk` writes 10k chunks per transaction through the store's row functions, without
    sqlite-vec (bulk_writer.py), instead of one `replace_file` per 20-chunk file."""
    import numpy as np

    from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
    from memlane.application.ports.index_store import IndexedFile
    from memlane.domain.chunks import Chunk, ChunkId, ContentHash
    from memlane.domain.keywords import build_fts_query

    rng = np.random.default_rng(42)
    words = np.array([f"w{i}" for i in range(VOCABULARY)])
    # Zipf-like word frequencies, so some keyword queries hit many chunks (the slow bm25 case).
    weights = 1.0 / np.arange(1, VOCABULARY + 1)
    weights /= weights.sum()
    vectors = clustered_vectors(size + queries, rng)
    np.save(where / "queries.npy", vectors[size:])
    common = [str(w) for w in rng.choice(words[:50], queries // 2)]
    rare = [str(w) for w in rng.choice(words[1000:], queries - queries // 2)]
    keyword_queries = [build_fts_query(f"{a} {b}") or "" for a, b in zip(common, rare, strict=True)]
    keyword_queries += [build_fts_query(w) or "" for w in rare[: queries // 2]]
    (where / "keyword_queries.json").write_text(json.dumps(keyword_queries))

    from memlane.adapters.store.database import SqliteDatabase
    from memlane.bench.bulk_writer import BulkWriter

    # Bulk mode skips sqlite-vec (its mirror is flagged stale) so that a million fits a session.
    store = SqliteIndexStore(SqliteDatabase.open(where / "index.db", load_vector=not bulk))
    start = time.perf_counter()
    writer = BulkWriter(store, DIMS)
    for f in range(size // CHUNKS_PER_FILE):
        first = f * CHUNKS_PER_FILE
        drawn = rng.choice(VOCABULARY, size=(CHUNKS_PER_FILE, WORDS_PER_CHUNK), p=weights)
        name = f"memory/file{f}.md"
        chunks = [
            Chunk(ChunkId(f"c{first + i}"), "memory", name, i * 5 + 1, i * 5 + 5,
                  " ".join(words[drawn[i]]), ContentHash(f"h{first + i}"))
            for i in range(CHUNKS_PER_FILE)
        ]  # fmt: skip
        block = vectors[first : first + CHUNKS_PER_FILE].tolist()
        file = IndexedFile("memory", name, ContentHash(f"f{f}"), 1.0, 100)
        if not bulk:
            store.replace_file(file, chunks, block, "m")
            continue
        writer.add(((c, v, "m") for c, v in zip(chunks, block, strict=True)), file)
    writer.flush()
    insert_seconds = time.perf_counter() - start
    # The first search of the default engine builds the code file (above MIN_ROWS vectors).
    t = time.perf_counter()
    store.search_vector(vectors[size].tolist(), model="m", sources=["memory"], limit=10)
    index_seconds = time.perf_counter() - t
    store.close()
    db_bytes = sum(p.stat().st_size for p in where.glob("index.db*") if ".vcodes" not in p.name)
    codes = where / "index.db.vcodes"
    return {
        "chunks": size,
        "dims": DIMS,
        "insert_chunks_per_s": round(size / insert_seconds),
        "insert_seconds": round(insert_seconds, 1),
        "insert_mode": "bulk, 10k chunks per transaction, no vec0" if bulk else "replace_file",
        "code_file_build_s": round(index_seconds, 2),
        "file_mb": round(db_bytes / 1e6, 1),
        "code_file_mb": round(codes.stat().st_size / 1e6, 1) if codes.exists() else 0.0,
        "bytes_per_chunk": round(db_bytes / size),
        "build_peak_rss_mb": _peak_rss_mb(),
    }


def _peak_rss_mb() -> float:
    """This process's RSS high-water mark (VmHWM; ru_maxrss survives exec on Linux, so a child
    would report its parent's size)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _search(where: Path, engine: str, vec0_queries: int, bulk: bool) -> dict[str, object]:
    """Time one engine in this (fresh) process; return timings, RSS and the top-10 chunk ids."""
    import numpy as np

    from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
    from memlane.domain.scoring import zscore_merge
    from memlane.domain.sources import ALL_SOURCES

    qv = [q.tolist() for q in np.load(where / "queries.npy")]
    keyword_queries = json.loads((where / "keyword_queries.json").read_text())
    pairs = list(zip(qv, keyword_queries, strict=False))

    def fused(store: SqliteIndexStore, p: tuple[list[float], str], pool: int) -> object:
        """Both legs at `pool` candidates each, then the default z-score fusion: what a hybrid
        search costs before snippets (24 = maxResults 6 x 4; 200 = the minCandidates floor)."""
        vector = store.search_vector(p[0], model="m", sources=ALL_SOURCES, limit=pool)
        keyword = store.search_keyword(p[1], sources=ALL_SOURCES, limit=pool)
        return zscore_merge(vector, keyword, vector_weight=0.5, text_weight=0.5)

    t = time.perf_counter()
    from memlane.adapters.store.database import SqliteDatabase

    database = SqliteDatabase.open(where / "index.db", load_vector=not bulk)
    store = SqliteIndexStore(database, vector_search=engine)  # type: ignore[arg-type]
    fused(store, pairs[0], 200)
    cold = time.perf_counter() - t

    def timed(fn: Callable[[Any], object], items: Sequence[Any]) -> list[float]:
        out = []
        for item in items:
            t = time.perf_counter()
            fn(item)
            out.append(time.perf_counter() - t)
        return out

    tops: list[list[str]] = []

    def vector_top10(q: list[float]) -> None:
        hits = store.search_vector(q, model="m", sources=ALL_SOURCES, limit=10)
        tops.append([h.chunk_id for h in hits])

    result: dict[str, object] = {"engine": engine, "cold_first_fused_ms": round(cold * 1000, 1)}
    if engine == "vec0":  # a KNN scan per query: a few queries tell its speed
        result["vector_top10"] = _percentiles(timed(vector_top10, qv[:vec0_queries]))
        store.close()
        return result
    result["vector_top10"] = _percentiles(timed(vector_top10, qv))
    result["top10_ids"] = tops
    wide = timed(lambda q: store.search_vector(q, model="m", sources=ALL_SOURCES, limit=200), qv)
    result["vector_top200"] = _percentiles(wide)
    result |= {
        "keyword_top10": _percentiles(timed(
            lambda m: store.search_keyword(m, sources=ALL_SOURCES, limit=10), keyword_queries)),
        "keyword_top10_source_filtered": _percentiles(timed(
            lambda m: store.search_keyword(m, sources=["memory"], limit=10), keyword_queries)),
        "hybrid_pair_top40": _percentiles(timed(
            lambda p: (store.search_vector(p[0], model="m", sources=ALL_SOURCES, limit=40),
                       store.search_keyword(p[1], sources=ALL_SOURCES, limit=40)), pairs)),
        "fused_search_pool24": _percentiles(timed(lambda p: fused(store, p, 24), pairs)),
        "fused_search_pool200": _percentiles(timed(lambda p: fused(store, p, 200), pairs)),
    }  # fmt: skip
    store.close()
    result["search_peak_rss_mb"] = _peak_rss_mb()
    return result


def _run_size(
    size: int, queries: int, keep: Path | None, bulk: bool, engines_run: Sequence[str]
) -> dict[str, object]:
    """Build in a child process, then time each engine in a fresh child process of its own.

    With `keep`, a store already built there (its build.json present) is reused, and the exact
    engine's top-10 lists are saved there, so that a later run can skip the exact engine (1M
    float32 vectors take ~6 GB of RSS) and still report recall against it."""
    where = Path(tempfile.mkdtemp(prefix="store-bench-")) if keep is None else keep
    where.mkdir(parents=True, exist_ok=True)

    def child(*args: str) -> dict[str, Any]:
        out = subprocess.run(
            [sys.executable, __file__, *args, "--where", str(where), "--queries", str(queries),
             *(["--bulk"] if bulk else [])],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        parsed: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
        return parsed

    built = where / "build.json"
    if keep is not None and built.exists():
        result: dict[str, Any] = json.loads(built.read_text()) | {"reused_store": True}
    else:
        result = child("--build", str(size))
        built.write_text(json.dumps(result))
    engines = {e: child("--search", e) for e in engines_run if not (bulk and e == "vec0")}
    saved_exact = where / "exact_top10.json"
    if "numpy" in engines:
        exact = engines["numpy"].pop("top10_ids")
        saved_exact.write_text(json.dumps(exact))
    elif saved_exact.exists():
        exact = json.loads(saved_exact.read_text())
    else:
        exact = []
    if "codes" not in engines or not exact:
        result["engines"] = engines
        return result
    got = engines["codes"].pop("top10_ids")
    hits = sum(len(set(a) & set(b)) for a, b in zip(got, exact, strict=True))
    result["codes_recall_at_10"] = round(hits / max(1, sum(len(b) for b in exact)), 4)
    result["codes_identical_top10"] = sum(a == b for a, b in zip(got, exact, strict=True))
    result["engines"] = engines
    if keep is None:
        for p in where.iterdir():
            p.unlink()
        where.rmdir()
    return result


def _cell(value: object) -> str:
    if isinstance(value, dict):
        return f"{value['p50_ms']} / {value['p95_ms']}"
    return str(value)


def _table(results: list[dict[str, Any]]) -> str:
    rows = [
        ("insert chunks/s", "insert_chunks_per_s"),
        ("database MB", "file_mb"),
        ("code file MB", "code_file_mb"),
        ("code file build s", "code_file_build_s"),
        ("codes recall@10 vs exact", "codes_recall_at_10"),
    ]
    per_engine = [
        ("cold first fused search ms", "cold_first_fused_ms"),
        ("vector top-10 p50/p95 ms", "vector_top10"),
        ("vector top-200 p50/p95 ms", "vector_top200"),
        ("keyword top-10 p50/p95 ms", "keyword_top10"),
        ("keyword (source filter) p50/p95", "keyword_top10_source_filtered"),
        ("hybrid pair top-40 p50/p95", "hybrid_pair_top40"),
        ("fused 24/leg p50/p95 ms", "fused_search_pool24"),
        ("fused 200/leg p50/p95 ms", "fused_search_pool200"),
        ("search process peak RSS MB", "search_peak_rss_mb"),
    ]
    header = f"{'metric':40}" + "".join(f"{r['chunks']:>18}" for r in results)
    lines = [header, "-" * len(header)]
    for label, key in rows:
        lines.append(f"{label:40}" + "".join(f"{_cell(r.get(key, '-')):>18}" for r in results))
    for engine in ("codes", "numpy", "vec0"):
        for label, key in per_engine:
            cells = [_cell(r["engines"].get(engine, {}).get(key, "-")) for r in results]
            lines.append(f"{engine + ': ' + label:40}" + "".join(f"{c:>18}" for c in cells))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--vec0-queries", type=int, default=10)
    parser.add_argument("--out", default="store_bench", help="result name under bench/results")
    parser.add_argument("--keep", type=Path, help="keep each size's store under this folder")
    parser.add_argument("--bulk", action="store_true", help="bulk inserts, no sqlite-vec")
    parser.add_argument(
        "--engines", nargs="+", default=["codes", "numpy", "vec0"],
        help="vector engines to time (with --keep, the exact top-10 of an earlier run is reused)",
    )  # fmt: skip
    parser.add_argument("--plot", nargs="+", help="only plot these result files together")
    parser.add_argument("--build", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--search", help=argparse.SUPPRESS)
    parser.add_argument("--where", type=Path, help=argparse.SUPPRESS)
    parser.add_argument(
        "--driver",
        choices=["sqlite", "postgres"],
        default="sqlite",
        help="postgres: PostgreSQL beside SQLite in one run (bench/pg_store_bench.py)",
    )
    args = parser.parse_args()
    if args.driver == "postgres":
        from memlane.bench.pg_store_bench import main as postgres_main

        out = [] if args.out == "store_bench" else ["--out", args.out]
        postgres_main(["--sizes", *map(str, args.sizes), "--queries", str(args.queries), *out])
        return
    if args.build:
        print(json.dumps(_build(args.build, args.queries, args.where, args.bulk)))
        return
    if args.search:
        print(json.dumps(_search(args.where, args.search, args.vec0_queries, args.bulk)))
        return
    target = Path(__file__).parent / "results" / f"{args.out}.json"
    if args.plot:
        merged = [r for name in args.plot for r in json.loads(Path(name).read_text())["results"]]
        merged.sort(key=lambda r: int(r["chunks"]))
        _plot(merged, target.with_suffix(".png"))
        return
    results = []
    for size in args.sizes:
        keep = None if args.keep is None else args.keep / str(size)
        results.append(_run_size(size, args.queries, keep, args.bulk, args.engines))
        # A checkpoint after each size: a long run killed later keeps what it measured.
        target.write_text(json.dumps({"machine_cores": 2, "results": results}, indent=2) + "\n")
        print(json.dumps(results[-1]), flush=True)
    print(_table(results))
    print(f"\nwritten {target}")
    if _plot(results, target.with_suffix(".png")):
        print(f"written {target.with_suffix('.png')}")


def _plot(results: list[dict[str, Any]], path: Path) -> bool:
    """p50 (solid) and p95 (dotted) against corpus size per leg. False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    sizes = [r["chunks"] for r in results]
    fig, ax = plt.subplots(figsize=(7.2, 4.6))
    for engine, key, label, color in (
        ("codes", "fused_search_pool200", "fused search, 200/leg", "C0"),
        ("codes", "vector_top10", "vector top-10 (code file)", "C1"),
        ("numpy", "vector_top10", "vector top-10 (exact matrix)", "C2"),
        ("codes", "keyword_top10", "keyword top-10 (FTS5)", "C3"),
    ):
        if not all(engine in r["engines"] for r in results):
            continue  # an engine not timed in this run (--engines)
        for pct, style in (("p50_ms", "-"), ("p95_ms", ":")):
            values = [r["engines"][engine][key][pct] for r in results]
            name = f"{label} {pct[:3]}"
            ax.plot(sizes, values, style, color=color, marker="o", label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("chunks (384 dims)")
    ax.set_ylabel("ms (solid p50, dotted p95)")
    ax.set_title("index store latency vs corpus size")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


if __name__ == "__main__":
    main()
