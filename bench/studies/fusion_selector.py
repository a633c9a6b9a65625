"""Fusion study: can features of the two legs pick each query's fusion weight, on a set never seen?

A per-query choice among the z-score weights 0.3 / 0.5 / 0.7 (vector share) would clear issue
#24's targets if it were clairvoyant (bench/RESULTS.md, session 18). The hand-made adaptive rules
of `fusion_study` did not find such a choice. This study learns one: a ridge regression from
fourteen features of the recorded legs and the question (the vector leg's best cosine and its
gaps and standing, the keyword leg's match count and its best evidence's standing, the legs'
agreement, the question's length and CJK share) to each alternative weight's nDCG@10 gain over
0.5. It is trained on six sets and judged on the seventh, for every set in turn; a weight other
than 0.5 is taken only where its predicted gain passes a margin. Nothing here ships.

    python -m bench.studies.fusion_study collect <sets>      # once
    python -m bench.studies.fusion_selector [--out F]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memlane.bench.datasets import registry
from memlane.bench.studies.fusion_study import LEGS_DIR, score_rules

Matrix = npt.NDArray[np.float64]
SETS = ("autorag_ko", "scifact", "jaquad_dev", "xquad_zh", "locomo", "lme_pooled", "lme_s_official")
ALTERNATIVES = ("z30", "z70")  # fusion_study's z-score rules; z50 is the shipped default
METRICS = ("ndcg@10", "recall_all@5", "turn_recall@L5")
MARGINS = (0.0, 0.02, 0.05)


def features(record: dict[str, Any], question: str) -> list[float]:
    vector = sorted((float(e[3]) for e in record["vector"]), reverse=True)[:200]
    keyword = sorted((max(0.0, float(e[3])) for e in record["keyword"]), reverse=True)[:200]
    v_mean, v_sd = statistics.fmean(vector), statistics.pstdev(vector) or 1e-9
    out = [
        vector[0],
        vector[0] - vector[1],
        vector[0] - vector[min(4, len(vector) - 1)],
        (vector[0] - v_mean) / v_sd,
        v_sd,
    ]
    if keyword:
        k_mean, k_sd = statistics.fmean(keyword), statistics.pstdev(keyword) or 1e-9
        second = keyword[1] if len(keyword) > 1 else 0.0
        out += [
            math.log1p(len(record["keyword"])),
            math.log1p(keyword[0]),
            (keyword[0] - k_mean) / k_sd,
            (keyword[0] - second) / k_sd,
            0.0,
        ]
    else:
        out += [0.0, 0.0, 0.0, 0.0, 1.0]
    v_order = [e[4] for e in sorted(record["vector"], key=lambda e: -e[3])]
    k_order = [e[4] for e in sorted(record["keyword"], key=lambda e: -e[3])[:200]]
    out.append(len(set(v_order[:10]) & set(k_order[:10])) / 10.0)
    out.append(math.log1p(k_order.index(v_order[0]) if v_order[0] in k_order else 200))
    out.append(math.log1p(v_order.index(k_order[0]) if k_order and k_order[0] in v_order else 400))
    out.append(math.log1p(len(question)))
    out.append(sum(1 for ch in question if ord(ch) > 0x2E80) / max(1, len(question)))
    return out


def load(name: str) -> tuple[Matrix, dict[str, dict[str, Matrix]]]:
    """Features per query, and each rule's metric per query (NaN where a set has no such metric)."""
    dataset = registry.load(name, None, registry.DEFAULT_DATA_ROOT)
    records = {
        (r["unit"], r["qid"]): r for r in json.loads((LEGS_DIR / f"{name}.json").read_text())
    }
    questions = {(u.unit_id, q.qid): q.text for u in dataset.units() for q in u.queries}
    rows = score_rules(name, ["z50", *ALTERNATIVES], 200, 50)
    keys = [key for key, _ in rows["z50"]]
    by_rule = {rule: dict(values) for rule, values in rows.items()}
    x = np.array([features(records[k], questions[k]) for k in keys], dtype=np.float64)
    y = {
        rule: {m: np.array([by_rule[rule][k].get(m, math.nan) for k in keys]) for m in METRICS}
        for rule in by_rule
    }
    return x, y


def ridge(x: Matrix, y: Matrix, penalty: float = 1.0) -> Callable[[Matrix], Matrix]:
    mean, sd = x.mean(0), x.std(0) + 1e-9

    def design(m: Matrix) -> Matrix:
        return np.hstack([(m - mean) / sd, np.ones((len(m), 1))])

    z = design(x)
    w = np.linalg.solve(z.T @ z + penalty * np.eye(z.shape[1]), z.T @ y)
    return lambda m: design(m) @ w


def leave_one_set_out(
    data: dict[str, tuple[Matrix, dict[str, dict[str, Matrix]]]], margin: float
) -> dict[str, dict[str, Any]]:
    report: dict[str, dict[str, Any]] = {}
    for held in data:
        train = [s for s in data if s != held]
        x_train = np.vstack([data[s][0] for s in train])
        predicted: dict[str, Matrix] = {}
        for rule in ALTERNATIVES:
            gain = np.concatenate(
                [data[s][1][rule]["ndcg@10"] - data[s][1]["z50"]["ndcg@10"] for s in train]
            )
            predicted[rule] = ridge(x_train, gain)(data[held][0])
        best = np.where(predicted["z70"] >= predicted["z30"], "z70", "z30")
        best_gain = np.maximum(predicted["z70"], predicted["z30"])
        choice = np.where(best_gain > margin, best, "z50")
        y = data[held][1]
        entry: dict[str, Any] = {rule: float(np.mean(choice == rule)) for rule in ALTERNATIVES}
        for m in METRICS:
            base = y["z50"][m]
            if np.isnan(base).all():
                continue
            chosen = np.array([y[str(c)][m][i] for i, c in enumerate(choice)])
            entry[m] = [float(np.nanmean(base)), float(np.nanmean(chosen))]
        report[held] = entry
    return report


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.studies.fusion_selector")
    p.add_argument("--sets", default=",".join(SETS))
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    data = {name: load(name) for name in args.sets.split(",")}
    # The ceiling: a clairvoyant choice of the best of the three weights for every query.
    result: dict[str, Any] = {"clairvoyant": {name: _ceiling(y) for name, (_, y) in data.items()}}
    print("clairvoyant best of z30 / z50 / z70 per query:")
    for name, ceiling in result["clairvoyant"].items():
        print(f"  {name:15} " + "  ".join(f"{m} {a:.3f}->{b:.3f}" for m, (a, b) in ceiling.items()))
    for margin in MARGINS:
        report = leave_one_set_out(data, margin)
        result[f"margin {margin}"] = report
        print(f"\npredicted gain must pass {margin}: held-out set, share moved, z50 -> chosen")
        for name, entry in report.items():
            moved = " ".join(f"{r} {entry[r]:.2f}" for r in ALTERNATIVES)
            cells = "  ".join(f"{m} {a:.3f}->{b:.3f}" for m, (a, b) in _metrics(entry))
            print(f"  {name:15} {moved}  {cells}")
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))


def _ceiling(y: dict[str, dict[str, Matrix]]) -> dict[str, tuple[float, float]]:
    out: dict[str, tuple[float, float]] = {}
    for m in METRICS:
        base = y["z50"][m]
        if not np.isnan(base).all():
            best = np.nanmax(np.vstack([y[rule][m] for rule in y]), axis=0)
            out[m] = (float(np.nanmean(base)), float(np.nanmean(best)))
    return out


def _metrics(entry: dict[str, Any]) -> list[tuple[str, tuple[float, float]]]:
    return [(m, (entry[m][0], entry[m][1])) for m in METRICS if m in entry]


if __name__ == "__main__":
    main()
