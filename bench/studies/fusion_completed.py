"""Fusion study: do the legs rank better when every candidate has both of its scores?

The shipped z-score fusion (`domain.scoring.zscore_merge`) gives a chunk that one leg did not
return that leg's floor (its lowest z). But a chunk only the keyword leg found still has a
cosine (its vector is in the store), and a chunk only the vector leg found may still match
some of the question's words below the keyword leg's cut. This study replays, over the legs
recorded by `fusion_study collect` (which keep the cosine of every candidate of either leg and
every keyword match), rules that fill in the missing score instead of the floor, plus two
transforms of the skewed bm25 evidence before standardising. Nothing here ships.

    python -m bench.studies.fusion_completed autorag_ko scifact ... [--pool 200] [--out F]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path

from memlane.bench.studies import fusion_study
from memlane.bench.studies.fusion_study import RULES, Leg, Rule, score_rules, shipped

Transform = Callable[[float], float]


def _z(values: dict[str, float], stats_of: Sequence[float]) -> dict[str, float]:
    """z-scores of `values` against the mean and population spread of `stats_of`."""
    mean = statistics.fmean(stats_of)
    spread = math.sqrt(statistics.fmean([(v - mean) ** 2 for v in stats_of]))
    if spread <= 1e-9:
        return dict.fromkeys(values, 0.0)
    return {c: (v - mean) / spread for c, v in values.items()}


def completed(
    *,
    fill_vector: bool,
    fill_keyword: bool,
    stats_over_union: bool,
    transform: Transform = lambda x: x,
    vector_weight: float = 0.5,
    stats_top: int | None = None,
) -> Rule:
    """z-score fusion where a candidate missing from a leg takes its real score in that leg
    (fill_*) instead of the leg's floor; statistics over each leg's own top `pool` or over the
    union of both legs' candidates; `stats_top` takes each leg's statistics from its first
    `stats_top` candidates only (the candidates still come from the whole pool)."""

    def rule(vec: Leg, kw: Leg, pool: int) -> list[str]:
        cos_all = {e[4]: e[3] for e in vec}
        ev_all = {e[4]: transform(max(0.0, e[3])) for e in kw}
        v_top = [e[4] for e in sorted(vec, key=lambda e: -e[3])[:pool]]
        k_top = [e[4] for e in sorted(kw, key=lambda e: -e[3])[:pool]]
        union = list(dict.fromkeys([*v_top, *k_top]))
        v_vals = {c: cos_all[c] for c in (union if fill_vector else v_top) if c in cos_all}
        k_vals = {c: ev_all.get(c, 0.0) for c in (union if fill_keyword else k_top)}
        v_stats = list(v_vals.values()) if stats_over_union else [cos_all[c] for c in v_top]
        k_stats = list(k_vals.values()) if stats_over_union else [ev_all[c] for c in k_top]
        if stats_top is not None:
            v_stats = [cos_all[c] for c in v_top[:stats_top]]
            k_stats = [ev_all[c] for c in k_top[:stats_top]]
        z_v = _z(v_vals, v_stats) if v_stats else {}
        z_k = _z(k_vals, k_stats) if k_stats else {}
        floor_v = min(z_v.values(), default=0.0)
        floor_k = min(z_k.values(), default=0.0)
        w_v, w_k = vector_weight, 1.0 - vector_weight
        if not z_k:
            w_k = 0.0
        score = {c: w_v * z_v.get(c, floor_v) + w_k * z_k.get(c, floor_k) for c in union}
        return sorted(union, key=lambda c: -score[c])

    return rule


STUDY_RULES: dict[str, Rule] = {
    "z50": shipped("zscore", 0.5, 0.5),
    "same_floor": completed(fill_vector=False, fill_keyword=False, stats_over_union=False),
    "fill_v": completed(fill_vector=True, fill_keyword=False, stats_over_union=False),
    "fill_k": completed(fill_vector=False, fill_keyword=True, stats_over_union=False),
    "fill_vk": completed(fill_vector=True, fill_keyword=True, stats_over_union=False),
    "fill_vk_u": completed(fill_vector=True, fill_keyword=True, stats_over_union=True),
    "log_kw": completed(
        fill_vector=False, fill_keyword=False, stats_over_union=False, transform=math.log1p
    ),
    "sqrt_kw": completed(
        fill_vector=False, fill_keyword=False, stats_over_union=False, transform=math.sqrt
    ),
    "fill_vk_log": completed(
        fill_vector=True, fill_keyword=True, stats_over_union=False, transform=math.log1p
    ),
    **{
        f"stats_top{n}": completed(
            fill_vector=False, fill_keyword=False, stats_over_union=False, stats_top=n
        )
        for n in (25, 50, 100)
    },
}

SHOW = ("ndcg@10", "recall@5", "recall_all@5", "recall_any@5", "turn_recall@L5")


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.studies.fusion_completed")
    p.add_argument("datasets", nargs="+")
    p.add_argument("--rules", default=",".join(STUDY_RULES))
    p.add_argument("--pool", type=int, default=200)
    p.add_argument("--keep", type=int, default=50)
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    RULES.update(STUDY_RULES)
    rules = args.rules.split(",")
    report: dict[str, dict[str, dict[str, object]]] = {}
    for name in args.datasets:
        rows = score_rules(name, rules, args.pool, args.keep)
        first = rows[rules[0]]
        cols = [m for m in SHOW if first and m in first[0][1]]
        halves = {h: [k for k, _ in first if fusion_study.half_of(k) == h] for h in "AB"}
        print(f"\n{name} (n={len(first)}, pool {args.pool}); all / half A / half B")
        print(f"{'rule':12}" + "".join(f"{c:>24}" for c in cols))
        report[name] = {}
        for rname in rules:
            by_key = dict(rows[rname])
            cells = []
            entry: dict[str, object] = {}
            for c in cols:
                parts = [statistics.fmean(by_key[k][c] for k in by_key)] + [
                    statistics.fmean(by_key[k][c] for k in halves[h]) for h in "AB"
                ]
                cells.append("/".join(f"{x:.3f}" for x in parts))
                entry[c] = parts
            report[name][rname] = entry
            print(f"{rname:12}" + "".join(f"{s:>24}" for s in cells))
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
