"""Bookkeeping shared by the studies that replay recorded legs under variants (`bm25_params`,
`hubness`): each query's metrics filed by variant, mode and group (all, the fixed half of
`fusion_study.half_of`, its category), their means, and a printed table of each variant's
difference from the base variant per half."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from memlane.bench.studies.fusion_study import half_of

METRICS = ("ndcg@10", "recall@5", "recall_all@5", "turn_recall@L5", "turn_recall@L10")
SHOWN = ("ndcg@10", "recall@5", "turn_recall@L5")
HALVES = ("all", "A", "B")

# variant -> mode -> group -> metric -> per-query values
Cells = dict[str, dict[str, dict[str, dict[str, list[float]]]]]


def file_scores(
    cells: Cells,
    variant: str,
    mode: str,
    key: tuple[str, str],
    category: str,
    scores: Mapping[str, float],
) -> None:
    table = cells.setdefault(variant, {}).setdefault(mode, {})
    for group in ("all", half_of(key), f"cat:{category}"):
        for metric in METRICS:
            if metric in scores:
                table.setdefault(group, {}).setdefault(metric, []).append(scores[metric])


def means(cells: Cells) -> dict[str, Any]:
    """variant -> mode -> group -> metric -> [mean, n] (what the result files hold)."""
    return {
        variant: {
            mode: {
                group: {m: [statistics.fmean(v), len(v)] for m, v in by_metric.items()}
                for group, by_metric in groups.items()
            }
            for mode, groups in modes.items()
        }
        for variant, modes in cells.items()
    }


def print_table(summary: dict[str, Any], base: str, modes: Sequence[str]) -> None:
    """The base variant's means, then every other variant's difference, per half; and by
    category on the first metric shown, where the set has categories."""
    ref = summary[base]
    for mode in modes:
        shown = [m for m in SHOWN if m in ref[mode]["all"]]
        print(f"  {mode}: " + "  ".join(f"{m} all / A / B" for m in shown))
        for variant, by_mode in summary.items():
            row = []
            for m in shown:
                vals = [by_mode[mode][h][m][0] for h in HALVES]
                if variant == base:
                    row.append(" / ".join(f"{v:.3f}" for v in vals))
                else:
                    base_vals = [ref[mode][h][m][0] for h in HALVES]
                    row.append(
                        " / ".join(f"{v - b:+.3f}" for v, b in zip(vals, base_vals, strict=True))
                    )
            print(f"    {variant:>9}  " + "   ".join(row))
        cats = sorted(g for g in ref[mode] if g.startswith("cat:") and g != "cat:all")
        if len(cats) > 1:
            m = shown[0]
            print(f"    by category, {m}: " + "  ".join(c[4:] for c in cats))
            for variant, by_mode in summary.items():
                if variant != base:
                    deltas = [by_mode[mode][c][m][0] - ref[mode][c][m][0] for c in cats]
                    print(f"    {variant:>9}  " + "  ".join(f"{d:+.3f}" for d in deltas))
