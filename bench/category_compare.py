"""Paired bootstrap per question category between two runs of one data set (issue #26: the time
boost against the same search without it, per LoCoMo category / LongMemEval question type).

    .venv/bin/python -m memlane.bench.category_compare A.records.json.gz B.records.json.gz \\
        [--mode keyword] [--metrics turn_recall@L5,recall_all@5]

Prints one markdown table per data set: A - B per category with its 95 % interval and p-value.
"""

from __future__ import annotations

import argparse
import gzip
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from memlane.bench.metrics import paired_bootstrap


def _records(path: Path, mode: str) -> dict[str, dict[str, dict[str, Any]]]:
    """data set -> qid -> record of `mode`."""
    raw = json.loads(gzip.decompress(path.read_bytes()))
    return {name: {r["qid"]: r for r in rows if r["mode"] == mode} for name, rows in raw.items()}


def compare(a: Path, b: Path, mode: str, metrics: list[str]) -> str:
    left, right = _records(a, mode), _records(b, mode)
    out: list[str] = []
    for name in sorted(set(left) & set(right)):
        qids = sorted(set(left[name]) & set(right[name]))
        by_category: dict[str, list[str]] = defaultdict(list)
        for qid in qids:
            by_category[str(left[name][qid]["category"])].append(qid)
        by_category["all"] = qids
        out += [
            f"### {name}, mode {mode}: A = {a.name}, B = {b.name}",
            "| category | metric | n | A | B | A - B | 95% CI | p |",
            "|---|---|---:|---:|---:|---:|---|---:|",
        ]
        for category in sorted(by_category):
            chosen = by_category[category]
            for metric in metrics:
                xs = [float(left[name][q]["metrics"][metric]) for q in chosen]
                ys = [float(right[name][q]["metrics"][metric]) for q in chosen]
                c = paired_bootstrap(xs, ys)
                out.append(
                    f"| {category} | {metric} | {c.n} | {sum(xs) / c.n:.3f} | "
                    f"{sum(ys) / c.n:.3f} | {c.mean_diff:+.3f} | "
                    f"[{c.ci_low:+.3f}, {c.ci_high:+.3f}] | {c.p_value:.3f} |"
                )
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    parser.add_argument("--mode", default="keyword")
    parser.add_argument("--metrics", default="turn_recall@L5,recall_all@5")
    args = parser.parse_args()
    print(compare(args.a, args.b, args.mode, args.metrics.split(",")))


if __name__ == "__main__":
    main()
