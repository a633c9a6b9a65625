"""Two runs' records (`*.records.json.gz`), A − B per mode, half and category, paired bootstrap.

Each set apart (a run may hold several). The halves: multi-unit sets by unit (the first half of
the sorted unit ids is the tuning half, the rest the report half: LoCoMo conv-26..conv-43 against
conv-44..conv-50); a one-unit set (lme_pooled) by a fixed hash of the query id (sha1 even:
tuning). Used for issue #26's boosts:

    python -m bench.studies.split_compare A.records.json.gz B.records.json.gz turn_recall@L5
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

Key = tuple[str, str, str, str]  # set, unit, qid, mode


def load(path: Path) -> dict[Key, dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        by_set: dict[str, list[dict[str, Any]]] = json.load(f)
    return {
        (name, r["unit"], r["qid"], r["mode"]): r for name, rows in by_set.items() for r in rows
    }


def half(unit: str, qid: str, tuning_units: set[str] | None) -> str:
    if tuning_units is not None:
        return "tune" if unit in tuning_units else "report"
    return "tune" if int(hashlib.sha1(qid.encode()).hexdigest(), 16) % 2 == 0 else "report"


def bootstrap(deltas: Sequence[float], resamples: int = 2000) -> tuple[float, float, float]:
    """Mean and 95 % interval of the mean (fixed seed)."""
    rnd = random.Random(7)
    n = len(deltas)
    means = sorted(sum(deltas[rnd.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    return sum(deltas) / n, means[int(0.025 * resamples)], means[int(0.975 * resamples)]


def compare(a: Path, b: Path, metric: str) -> list[str]:
    runs_a, runs_b = load(a), load(b)
    tuning: dict[str, set[str] | None] = {}
    for name in sorted({key[0] for key in runs_a}):
        units = sorted({key[1] for key in runs_a if key[0] == name})
        tuning[name] = set(units[: len(units) // 2]) if len(units) > 1 else None
    groups: dict[tuple[str, str, str, str], list[tuple[float, float]]] = defaultdict(list)
    for key, row_a in runs_a.items():
        row_b = runs_b.get(key)
        if row_b is None:
            continue
        name, unit, qid, mode = key
        base = float(row_b["metrics"].get(metric, 0.0))
        delta = float(row_a["metrics"].get(metric, 0.0)) - base
        # A set without categories labels every query "all": count it once, not twice.
        for category in dict.fromkeys((str(row_a["category"]), "all")):
            groups[(name, mode, half(unit, qid, tuning[name]), category)].append((delta, base))
    lines = [
        f"{metric}, A − B; tuning half of {name}: {sorted(units) if units else 'sha1(qid) even'}"
        for name, units in tuning.items()
    ]
    for (name, mode, part, category), pairs in sorted(groups.items()):
        deltas = [d for d, _ in pairs]
        mean, low, high = bootstrap(deltas)
        base = sum(b for _, b in pairs) / len(pairs)
        moved = sum(1 for d in deltas if d != 0)
        lines.append(
            f"{name:14} {mode:8} {part:6} {category:26} n={len(pairs):4} B={base:.3f} "
            f"Δ={mean:+.3f} [{low:+.3f}, {high:+.3f}] moved={moved}"
        )
    return lines


def main(argv: Sequence[str]) -> None:
    a, b, *metrics = argv
    for metric in metrics or ["turn_recall@L5", "recall_all@5"]:
        print("\n".join(compare(Path(a), Path(b), metric)))


if __name__ == "__main__":
    main(sys.argv[1:])
