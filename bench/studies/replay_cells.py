"""Bookkeeping shared by the studies that replay recorded legs under variants (`bm25_params`,
`hubness`): each query's metrics filed by variant, mode and group (all, the fixed half of
`fusion_study.half_of`, its category), their means, and a printed table of each variant's
difference from the base variant per half."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memlane.bench import metrics
from memlane.bench.cli import BENCH_DIR
from memlane.bench.datasets import registry
from memlane.bench.datasets.model import Dataset, Query, Unit
from memlane.bench.runner import score_query
from memlane.bench.studies.fusion_study import LEGS_DIR, half_of

METRICS = ("ndcg@10", "recall@5", "recall_all@5", "turn_recall@L5", "turn_recall@L10")
SHOWN = ("ndcg@10", "recall@5", "turn_recall@L5")
HALVES = ("all", "A", "B")

# variant -> mode -> group -> metric -> per-query values
Cells = dict[str, dict[str, dict[str, dict[str, list[float]]]]]


@dataclass(frozen=True)
class Recorded:
    """One query with its recorded legs (`fusion_study collect`) and what scoring it needs."""

    dataset: Dataset
    unit: Unit
    query: Query
    legs: dict[str, Any]
    doc_of_path: dict[str, str]

    def file(
        self,
        cells: Cells,
        variant: str,
        rankings: Mapping[str, Sequence[str]],
        where: Mapping[str, metrics.Hit],
    ) -> None:
        """Score each mode's ranking (chunk ids, best first) and file it under `variant`."""
        q = self.query
        for mode, ids in rankings.items():
            hits = [where[c] for c in ids]
            got = score_query(q, hits, self.doc_of_path, turn_level=self.dataset.turn_level)
            file_scores(cells, variant, mode, (self.unit.unit_id, q.qid), q.category, got)


def recorded_queries(name: str) -> Iterator[Recorded]:
    """Every query of a set that has recorded legs (`bench/work/legs/<set>.json`), unit by unit."""
    dataset = registry.load(name, None, registry.DEFAULT_DATA_ROOT)
    by_key = {(r["unit"], r["qid"]): r for r in json.loads((LEGS_DIR / f"{name}.json").read_text())}
    for unit in dataset.units():
        doc_of_path = unit.doc_of_path()
        for q in unit.queries:
            rec = by_key.get((unit.unit_id, q.qid))
            if rec is not None:
                yield Recorded(dataset, unit, q, rec, doc_of_path)


def result_path(given: str, suffix: str) -> Path:
    """Where a study writes its JSON: `given`, or bench/results/<stamp>-<suffix>.json."""
    if given:
        return Path(given)
    return BENCH_DIR / "results" / f"{time.strftime('%Y%m%d-%H%M%S')}-{suffix}.json"


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
