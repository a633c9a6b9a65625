"""Study (session 25): transcript hits that reach one line past their chunk.

On LoCoMo the answer is often the message right after the one that matches the question (the
reply), and session 10 found that moving the next chunk up loses as many questions as it gains.
This asks the narrower question: would a hit that also holds the line after its chunk (or the
line before it), the first hit only or every hit, serve a line budget better? It replays the
shipped fusion over the legs `fusion_study collect` recorded, widens the hits (within the
file's known lines), and scores them with the harness's metrics, on the two fixed halves of
`fusion_study.half_of`. The budget counts lines, not text: on LongMemEval a line is a whole
message, often hundreds of words, so a line more is not a small cost there.

    python -m bench.studies.hit_reach locomo lme_pooled lme_s_official --out F

Writes bench/results/<F>.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Sequence
from pathlib import Path

from memlane.bench import metrics
from memlane.bench.cli import BENCH_DIR
from memlane.bench.studies.fusion_study import half_of, recorded_queries

METRICS = ("turn_recall@L5", "turn_recall@L10", "turn_recall@L25", "lines_per_hit@5")
# name -> (lines after, lines before, first hit only)
VARIANTS: dict[str, tuple[int, int, bool]] = {
    "shipped": (0, 0, False),
    "first_hit_plus_next_line": (1, 0, True),
    "every_hit_plus_next_line": (1, 0, False),
    "first_hit_plus_line_before": (0, 1, True),
}


def widened(
    hits: Sequence[metrics.Hit], variant: tuple[int, int, bool], last_line: dict[str, int]
) -> list[metrics.Hit]:
    after, before, first_only = variant
    return [
        (path, start, end)
        if first_only and rank > 0
        else (path, max(1, start - before), min(last_line.get(path, end), end + after))
        for rank, (path, start, end) in enumerate(hits)
    ]


def study(name: str) -> dict[str, dict[str, float]]:
    rows: dict[str, list[tuple[str, dict[str, float]]]] = {v: [] for v in VARIANTS}
    for recorded in recorded_queries(name):
        last_line: dict[str, int] = {}
        for path, _, end in recorded.where.values():
            last_line[path] = max(last_line.get(path, 0), end)
        hits = recorded.hits("z50", 200, 50)
        half = half_of(recorded.key)
        for label, variant in VARIANTS.items():
            rows[label].append((half, recorded.score(widened(hits, variant, last_line))))
    return {
        label: {
            f"{metric} {half}": round(
                statistics.fmean(s[metric] for h, s in vals if half in (h, "all")), 4
            )
            for metric in METRICS
            for half in ("A", "B", "all")
        }
        for label, vals in rows.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="+")
    parser.add_argument("--out", default="hit-reach")
    args = parser.parse_args()
    report = {name: study(name) for name in args.sets}
    for name, found in report.items():
        print(f"\n{name}")
        for label, values in found.items():
            print(f"  {label:28} " + "  ".join(f"{k} {v:.3f}" for k, v in values.items()))
    target = Path(BENCH_DIR) / "results" / f"{args.out}.json"
    target.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"\nwritten {target}")


if __name__ == "__main__":
    main()
