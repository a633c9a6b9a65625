"""Benchmark: the keyword leg, pruned (the store's path) against FTS5 ranking every match.

Opens a store built by `bench/store_bench.py --keep DIR` and times, alternating per query in one
process so both see the same machine: the store's `search_keyword` path (MaxScore pruning over
FTS5, `adapters/store/keyword_search.py`) and FTS5's own `ORDER BY rank LIMIT k` over every
match (`rows.keyword_top`), at top-10 and top-200, every source and one source. Checks that both
return the same (rowid, score) lists, and counts which queries the pruned path answered itself.
Queries: the store bench's keyword queries (a common word OR a rare one, and rare words alone)
and, with --extra, more OR-queries of 2-6 words drawn from the same Zipf vocabulary.

    .venv/bin/python bench/studies/keyword_bench.py --where bench/work/stores/100000 --out \
        keyword_100k

Writes bench/results/<out>.json.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from pathlib import Path
from typing import Any

from memlane.adapters.store import rows
from memlane.adapters.store.database import SqliteDatabase
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.domain.keywords import build_fts_query
from memlane.domain.sources import ALL_SOURCES, Source


def _pct(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 2),
        "max_ms": round(ordered[-1] * 1000, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--where", type=Path, required=True)
    parser.add_argument("--extra", type=int, default=20, help="extra multi-word OR queries")
    parser.add_argument("--out", default="keyword_bench")
    args = parser.parse_args()
    queries: list[str] = json.loads((args.where / "keyword_queries.json").read_text())
    rng = random.Random(7)
    for _ in range(args.extra):
        words = [
            f"w{min(int(rng.paretovariate(0.45)) - 1, 19_999)}" for _ in range(rng.randint(2, 6))
        ]
        queries.append(build_fts_query(" ".join(words)) or "")
    # Without sqlite-vec: a bulk-built store has no vec0 mirror, and loading the extension would
    # make the open rebuild it (a million vectors written) before any query.
    store = SqliteIndexStore(SqliteDatabase.open(args.where / "index.db", load_vector=False))
    search = store._keywords  # the store's keyword leg, timed without the candidate lookups
    cases: list[tuple[str, int, list[Source]]] = [
        ("top10", 10, list(ALL_SOURCES)),
        ("top10_source_filter", 10, ["memory"]),
        ("top200", 200, list(ALL_SOURCES)),
    ]
    result: dict[str, Any] = {"where": str(args.where), "queries": len(queries)}
    for name, limit, sources in cases:
        every = set(ALL_SOURCES) <= set(sources)
        pruned: list[float] = []
        full: list[float] = []
        plans: dict[str, int] = {}
        same = 0
        for i, match in enumerate(queries):
            runs = {}
            for which in ("pruned", "full") if i % 2 == 0 else ("full", "pruned"):
                t = time.perf_counter()
                with store.database.read() as conn:
                    if which == "pruned":
                        got = search.top(conn, match, sources, every_source=every, limit=limit)
                    else:
                        got = rows.keyword_top(
                            conn, match, sources, every_source=every, limit=limit
                        )
                (pruned if which == "pruned" else full).append(time.perf_counter() - t)
                runs[which] = got
            plans[search.last_plan] = plans.get(search.last_plan, 0) + 1
            same += runs["pruned"] == runs["full"]
        result[name] = {
            "pruned": _pct(pruned),
            "fts5_every_match": _pct(full),
            "identical_lists": same,
            "plans": plans,
        }
        print(name, json.dumps(result[name]), flush=True)
    # The store's own call (candidates included), warm, as the store bench times it.
    warm = []
    for match in queries:
        t = time.perf_counter()
        store.search_keyword(match, sources=ALL_SOURCES, limit=10)
        warm.append(time.perf_counter() - t)
    result["store_search_keyword_top10"] = _pct(warm)
    store.close()
    target = Path(__file__).parent.parent / "results" / f"{args.out}.json"
    target.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written {target}")


if __name__ == "__main__":
    main()
