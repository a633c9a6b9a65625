"""What a `minScore` cut costs a default-sized search (issue #24 item 1; session 21).

The harness scores 50 hits per question, and until session 21 it searched with `minScore` 0
whatever the product's default was, so the guard never saw what the default cut (0.35, the
reference's) removed. This study asks each question twice, side by side on the same store, with
the default number of results (6): once with `--cut` (0.35) and once with none, and compares the
primary metrics per category with the paired bootstrap. It also counts the questions that got
fewer hits, and the lowest score among the uncut hits.

    python -m bench.studies.min_score_cost locomo scifact --modes keyword,hybrid
        [--cut 0.35] [--hits 6] [--out bench/results/<stamp>-min-score-cost.json]

Reads the stores `python -m bench run` (or `guard`) left under bench/work.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memlane.bench.cli import BENCH_DIR
from memlane.bench.datasets import registry
from memlane.bench.metrics import paired_bootstrap
from memlane.bench.runner import (
    MODES,
    memlane_opener,
    mode_config,
    open_unit,
    score_query,
    store_key,
)
from memlane.bench.workspace import UnitPaths

PRIMARY = ("recall_all@5", "recall_any@5", "ndcg@10", "recall@5", "turn_recall@L5")


def measure(name: str, mode: str, cut: float, hits: int, work: Path) -> dict[str, Any]:
    dataset = registry.load(name, None, registry.DEFAULT_DATA_ROOT)
    opener = memlane_opener()
    cut_scores: dict[tuple[str, str], list[float]] = defaultdict(list)
    full_scores: dict[tuple[str, str], list[float]] = defaultdict(list)
    questions = fewer = removed = 0
    lowest: list[float] = []
    for unit in dataset.units():
        paths = UnitPaths.for_unit(work, name, unit.unit_id)
        store = paths.store_path(store_key({"provider": "local", **MODES[mode]}))
        if not store.exists():
            raise SystemExit(f"no store {store}: run `python -m bench run {name}` first")
        managers = [
            open_unit(opener, paths, mode_config(mode, "local", store, hits, extra))
            for extra in ({"query": {"minScore": cut}}, {"query": {"minScore": 0}})
        ]
        doc_of_path = unit.doc_of_path()
        try:
            for q in unit.queries:
                with_cut, without = (
                    m.search(q.text, max_results=hits, as_of=q.as_of).results for m in managers
                )
                questions += 1
                if len(with_cut) < len(without):
                    fewer += 1
                    removed += len(without) - len(with_cut)
                if without:
                    lowest.append(min(r.score for r in without))
                for results, into in ((with_cut, cut_scores), (without, full_scores)):
                    scored = score_query(
                        q,
                        [(r.path, r.start_line, r.end_line) for r in results],
                        doc_of_path,
                        turn_level=dataset.turn_level,
                    )
                    for group in ("all", str(q.category)):
                        for metric in PRIMARY:
                            if metric in scored:
                                into[(group, metric)].append(scored[metric])
        finally:
            for m in managers:
                m.close()
    rows = []
    for key in sorted(cut_scores):
        a, b = cut_scores[key], full_scores[key]
        if len(a) < 8:
            continue
        test = paired_bootstrap(a, b)
        rows.append(
            {
                "category": key[0],
                "metric": key[1],
                "n": len(a),
                "cut": statistics.fmean(a),
                "none": statistics.fmean(b),
                "diff": test.mean_diff,
                "ci": [test.ci_low, test.ci_high],
                "p": test.p_value,
            }
        )
    return {
        "set": name,
        "mode": mode,
        "cut": cut,
        "hits": hits,
        "questions": questions,
        "questions_with_fewer_hits": fewer,
        "hits_removed": removed,
        "lowest_uncut_score": min(lowest, default=None),
        "rows": rows,
    }


def show(result: dict[str, Any]) -> None:
    print(
        f"\n{result['set']} {result['mode']}: {result['questions']} questions, "
        f"{result['questions_with_fewer_hits']} with fewer hits at minScore {result['cut']} "
        f"({result['hits_removed']} hits removed); lowest uncut score "
        f"{result['lowest_uncut_score']}"
    )
    for row in result["rows"]:
        if row["category"] == "all" or abs(row["diff"]) > 1e-12:
            low, high = row["ci"]
            print(
                f"  {row['category']:28} {row['metric']:15} n={row['n']:5} "
                f"{row['cut']:.3f} vs {row['none']:.3f}  {row['diff']:+.3f} "
                f"[{low:+.3f}, {high:+.3f}] p {row['p']:.3f}"
            )


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.studies.min_score_cost")
    p.add_argument("datasets", nargs="+")
    p.add_argument("--modes", default="keyword,vector,hybrid")
    p.add_argument("--cut", type=float, default=0.35)
    p.add_argument("--hits", type=int, default=6)
    p.add_argument("--work", type=Path, default=BENCH_DIR / "work")
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    results = []
    for name in args.datasets:
        for mode in args.modes.split(","):
            result = measure(name, mode, args.cut, args.hits, args.work)
            show(result)
            results.append(result)
    out = (
        args.out or BENCH_DIR / "results" / f"{time.strftime('%Y%m%d-%H%M%S')}-min-score-cost.json"
    )
    out.write_text(json.dumps({"command": "min_score_cost", "results": results}, indent=1) + "\n")
    print(f"\nresults: {out}")


if __name__ == "__main__":
    main()
