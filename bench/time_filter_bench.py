"""Benchmark: the `since` / `until` filter on the SQLite store (issue #26), 100k and more chunks.

Builds an index of N chunks of 384 dimensions (bulk row writes, bulk_writer.py), each
file of 20 chunks dated one day, the days spread over two years; then, in the same process,
times the keyword leg and the vector leg (default code-file engine) at 200 candidates (the
fused pool) without a window and with the windows of WINDOWS: a day, a week, a month and a year
ending at the newest day, and a day, a week and a month ending a year before it (mid-span) or at
the oldest day. Each leg's hits are counted against what the corpus holds in the window (the
vector leg: every chunk in it, up to 200; the keyword leg: every chunk in it with a query word,
up to 200): `short` counts the queries that got fewer. Windows are the filter of the store,
applied inside each leg before its top k.

    nice .venv/bin/python bench/time_filter_bench.py --sizes 100000 [--queries 40]

Prints a table and writes bench/results/time_filter_bench.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memlane.bench.store_bench import (
    CHUNKS_PER_FILE,
    DIMS,
    VOCABULARY,
    WORDS_PER_CHUNK,
    clustered_vectors,
)

DAY = 86_400.0
SPAN_DAYS = 730
NEWEST = 1_794_873_600.0  # 2026-11-17T00:00:00Z
# name: (days, days before the newest day that the window ends), or None for no window. The
# first five end at the newest day (the names and hits of session 10's runs).
WINDOWS: dict[str, tuple[int, int] | None] = {
    "none": None,
    "day": (1, 0),
    "week": (7, 0),
    "month": (30, 0),
    "year": (365, 0),
    "day -1y": (1, 365),
    "week -1y": (7, 365),
    "month -1y": (30, 365),
    "day oldest": (1, SPAN_DAYS - 1),
    "month oldest": (30, SPAN_DAYS - 30),
}
POOL = 200


def file_day(f: int, files_total: int) -> int:
    """Days before the newest day that file `f` is dated (file 0 is the newest)."""
    return f * SPAN_DAYS // files_total


def window_files(spec: tuple[int, int], files_total: int) -> tuple[int, int]:
    """The files [first, stop) dated inside the window `spec` (files run newest to oldest)."""
    import numpy as np

    days, end = spec
    dated = np.arange(files_total, dtype=np.int64) * SPAN_DAYS // files_total
    first = int(np.searchsorted(dated, end, side="left"))
    stop = int(np.searchsorted(dated, end + days - 1, side="right"))
    return first, stop


class KeywordTruth:
    """How many chunks of each file hold a word of each keyword query, filled as the corpus is
    drawn: the keyword leg's expected hit count in a window, independent of any store."""

    def __init__(self, keyword_queries: list[str], files_total: int) -> None:
        import re

        import numpy as np

        self._member = np.zeros((VOCABULARY, len(keyword_queries)), dtype=bool)
        for q, query in enumerate(keyword_queries):
            for word in re.findall(r"\bw(\d+)\b", query):
                self._member[int(word), q] = True
        self.per_file = np.zeros((files_total, len(keyword_queries)), dtype=np.int32)

    def add(self, f: int, drawn: Any) -> None:
        """File `f`'s drawn word indices, one row per chunk."""
        self.per_file[f] = self._member[drawn].any(axis=1).sum(axis=0)


def _build(size: int, queries: int, where: Path) -> tuple[list[list[float]], list[str], float, Any]:

    from memlane.adapters.store.database import SqliteDatabase
    from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
    from memlane.application.ports.index_store import IndexedFile
    from memlane.bench.bulk_writer import BulkWriter
    from memlane.domain.chunks import Chunk, ChunkId, ContentHash

    rng, words, weights, vectors, keyword_queries = corpus_draws(size, queries)
    store = SqliteIndexStore(SqliteDatabase.open(where / "index.db", load_vector=False))
    files_total = size // CHUNKS_PER_FILE
    writer = BulkWriter(store, DIMS)
    truth = KeywordTruth(keyword_queries, files_total)

    start = time.perf_counter()
    for f in range(files_total):
        first = f * CHUNKS_PER_FILE
        day = NEWEST - file_day(f, files_total) * DAY
        drawn = rng.choice(VOCABULARY, size=(CHUNKS_PER_FILE, WORDS_PER_CHUNK), p=weights)
        truth.add(f, drawn)
        name = f"memory/file{f}.md"
        chunks = []
        for i in range(CHUNKS_PER_FILE):
            chunk = Chunk(
                ChunkId(f"c{first + i}"), "memory", name, i * 5 + 1, i * 5 + 5,
                " ".join(words[drawn[i]]), ContentHash(f"h{first + i}"),
                time_start=day, time_end=day + DAY - 1,
            )  # fmt: skip
            chunks.append((chunk, vectors[first + i].tolist(), "m"))
        writer.add(chunks, IndexedFile("memory", name, ContentHash(f"f{f}"), 1.0, 100))
    writer.flush()
    build = time.perf_counter() - start
    # The first vector search builds the code file.
    store.search_vector(vectors[size].tolist(), model="m", sources=["memory"], limit=10)
    store.close()
    return [v.tolist() for v in vectors[size:]], keyword_queries, build, truth.per_file


def _timed(fn: Callable[[int], list[str]], n: int, expected: list[int]) -> dict[str, Any]:
    """Time `fn` on queries 0..n-1; `expected[i]` is the hit count query i must reach."""
    samples: list[float] = []
    counts: list[int] = []
    digest = hashlib.sha256()
    for i in range(n):
        t = time.perf_counter()
        ids = fn(i)
        samples.append(time.perf_counter() - t)
        counts.append(len(ids))
        digest.update(("\n".join(ids) + "\n\n").encode())
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 1),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 1),
        "min_hits": min(counts),
        "expected_min_hits": min(expected[:n]),
        "short": sum(c < e for c, e in zip(counts, expected, strict=False)),
        # The ranked chunk ids of every query, in order: equal digests = the same hits.
        "hits_sha256": digest.hexdigest()[:16],
    }


def run(size: int, queries: int, keep: Path | None = None) -> dict[str, Any]:
    if keep is None:
        with tempfile.TemporaryDirectory(prefix="time-filter-") as tmp:
            return _run_in(size, queries, Path(tmp))
    where = keep / str(size)
    where.mkdir(parents=True, exist_ok=True)
    return _run_in(size, queries, where)


def _run_in(size: int, queries: int, where: Path) -> dict[str, Any]:
    """Build the corpus in `where` (or reuse the one a `--keep` run left there: the draws are
    seeded, so its queries are redrawn identically) and measure it."""
    import numpy as np

    from memlane.adapters.store.database import SqliteDatabase
    from memlane.adapters.store.sqlite_index_store import SqliteIndexStore

    queries_file = where / f"queries-{queries}.json"
    truth_file = where / f"keyword-truth-{queries}.npy"
    if queries_file.exists() and truth_file.exists() and (where / "index.db").exists():
        saved = json.loads(queries_file.read_text(encoding="utf-8"))
        vectors, keywords, build = saved["vectors"], saved["keywords"], saved["build_s"]
        truth = np.load(truth_file)
    else:
        for old in where.glob("index.db*"):
            old.unlink()
        vectors, keywords, build, truth = _build(size, queries, where)
        saved = {"vectors": vectors, "keywords": keywords, "build_s": build}
        queries_file.write_text(json.dumps(saved), encoding="utf-8")
        np.save(truth_file, truth)
    store = SqliteIndexStore(SqliteDatabase.open(where / "index.db", load_vector=False))
    try:
        return measure(store, size, vectors, keywords, queries, build, truth)
    finally:
        store.close()


def measure(
    store: Any,
    size: int,
    vectors: list[list[float]],
    keywords: list[str],
    queries: int,
    build: float,
    truth: Any,
) -> dict[str, Any]:
    """Each leg of `store` (an IndexStore holding the corpus `_build` describes) at POOL
    candidates, without a window and with each of WINDOWS; `truth` is KeywordTruth.per_file."""
    from memlane.domain.search import TimeWindow
    from memlane.domain.sources import ALL_SOURCES

    files_total = size // CHUNKS_PER_FILE
    result: dict[str, Any] = {"chunks": size, "build_s": round(build, 1), "windows": {}}
    for name, spec in WINDOWS.items():
        first, stop = (0, files_total) if spec is None else window_files(spec, files_total)
        in_window = (stop - first) * CHUNKS_PER_FILE
        keyword_expected = [min(POOL, int(n)) for n in truth[first:stop].sum(axis=0)]
        vector_expected = [min(POOL, in_window)] * queries
        window = None
        if spec is not None:
            days, end = spec
            since = NEWEST - (end + days - 1) * DAY
            window = TimeWindow(since=since, until=NEWEST - end * DAY + DAY - 1)

        def keyword(i: int, window: TimeWindow | None = window) -> list[str]:
            hits = store.search_keyword(
                keywords[i % len(keywords)], sources=ALL_SOURCES, limit=POOL, window=window
            )
            return [str(h.chunk_id) for h in hits]

        def vector(i: int, window: TimeWindow | None = window) -> list[str]:
            hits = store.search_vector(
                vectors[i % len(vectors)], model="m", sources=ALL_SOURCES, limit=POOL, window=window
            )
            return [str(h.chunk_id) for h in hits]

        vector(0)  # warm
        result["windows"][name] = {
            "chunks_in_window": in_window,
            "keyword": _timed(keyword, queries, keyword_expected),
            "vector": _timed(vector, queries, vector_expected),
        }
    return result


def _table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| chunks | window | chunks in it | keyword p50 / p95 ms | vector p50 / p95 ms | "
        "fewest hits (expected) kw / vec | short queries kw / vec |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        for name, w in r["windows"].items():
            k, v = w["keyword"], w["vector"]
            lines.append(
                f"| {r['chunks']:,} | {name} | {w['chunks_in_window']:,} | "
                f"{k['p50_ms']} / {k['p95_ms']} | {v['p50_ms']} / {v['p95_ms']} | "
                f"{k['min_hits']} ({k['expected_min_hits']}) / "
                f"{v['min_hits']} ({v['expected_min_hits']}) | {k['short']} / {v['short']} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--out", default="time_filter_bench")
    parser.add_argument(
        "--keep", type=Path, help="build into DIR/<size> and reuse it on the next run (A/B)"
    )
    args = parser.parse_args()
    results = [run(size, args.queries, args.keep) for size in args.sizes]
    print(_table(results))
    out = Path(__file__).parent / "results" / f"{args.out}.json"
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")


def corpus_draws(size: int, queries: int) -> tuple[Any, Any, Any, Any, list[str]]:
    """The corpus's random draws, in their order (rng, words, Zipf weights, vectors, keyword
    queries): the SQLite and PostgreSQL time-filter benches build the same corpus from them."""
    import numpy as np

    from memlane.domain.keywords import build_fts_query

    rng = np.random.default_rng(26)
    words = np.array([f"w{i}" for i in range(VOCABULARY)])
    weights = 1.0 / np.arange(1, VOCABULARY + 1)
    weights /= weights.sum()
    vectors = clustered_vectors(size + queries, rng)
    common = [str(w) for w in rng.choice(words[:50], queries)]
    rare = [str(w) for w in rng.choice(words[1000:], queries)]
    keyword_queries = [build_fts_query(f"{a} {b}") or "" for a, b in zip(common, rare, strict=True)]
    return rng, words, weights, vectors, keyword_queries


if __name__ == "__main__":
    main()
