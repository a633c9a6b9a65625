"""Benchmark: one kept store, the search process of two checkouts side by side.

Runs `bench/store_bench.py --search codes` of a baseline checkout (e.g. /work/main, before a
change) and of this one, alternately, each in a fresh process, `--rounds` times, on a store
kept by `bench/store_bench.py --keep DIR` (so both see the same file, the same machine minutes).
Reports the median over rounds of each figure per side and the after/before ratios.

    .venv/bin/python bench/store_side_by_side.py --where bench/work/stores/1000000 \
        --baseline /work/main --rounds 3 --out store_side_by_side_1m

Writes bench/results/<out>.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

_KEYS = (
    "cold_first_fused_ms",
    "vector_top10",
    "vector_top200",
    "keyword_top10",
    "keyword_top10_source_filtered",
    "fused_search_pool24",
    "fused_search_pool200",
    "search_peak_rss_mb",
)


def _run(python: str, script: Path, where: Path, queries: int) -> dict[str, Any]:
    out = subprocess.run(
        [python, str(script), "--search", "codes", "--where", str(where), "--queries",
         str(queries), "--bulk"],
        capture_output=True, text=True, check=True, cwd=script.parent.parent,
    )  # fmt: skip
    parsed: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    parsed.pop("top10_ids", None)
    return parsed


def _median(runs: list[dict[str, Any]], key: str) -> Any:
    values = [r[key] for r in runs if key in r]
    if not values:
        return None
    if isinstance(values[0], dict):
        return {p: round(statistics.median(v[p] for v in values), 2) for p in values[0]}
    return round(statistics.median(values), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--where", type=Path, required=True)
    parser.add_argument("--baseline", type=Path, required=True, help="the other checkout")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--out", default="store_side_by_side")
    args = parser.parse_args()
    here = Path(__file__).resolve().parent.parent
    sides = {
        "before": (str(args.baseline / ".venv/bin/python"), args.baseline / "bench/store_bench.py"),
        "after": (sys.executable, here / "bench/store_bench.py"),
    }
    runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
    where = args.where.resolve()
    for round_ in range(args.rounds):
        for side in ("before", "after") if round_ % 2 == 0 else ("after", "before"):
            python, script = sides[side]
            runs[side].append(_run(python, script, where, args.queries))
            print(side, json.dumps(runs[side][-1]), flush=True)
    result: dict[str, Any] = {"where": str(args.where), "rounds": args.rounds, "runs": runs}
    for side, side_runs in runs.items():
        result[side] = {k: _median(side_runs, k) for k in _KEYS}
    target = here / "bench" / "results" / f"{args.out}.json"
    target.write_text(json.dumps(result, indent=2) + "\n")
    for key in _KEYS:
        print(f"{key:34} before {result['before'][key]}  after {result['after'][key]}")
    print(f"written {target}")


if __name__ == "__main__":
    main()
