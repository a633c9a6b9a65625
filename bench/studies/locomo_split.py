"""LoCoMo by part: two harness runs (A, B) read on the tune part (conversations 0-4) and the
held-out part (conversations 5-9), per mode and category, from their `.records.json.gz` files.

    python -m bench.studies.locomo_split A.records.json.gz B.records.json.gz

Prints one markdown row per mode, part and category: B → A for recall_all@5, nDCG@10 and turn
recall at 5 lines (the split of bench/studies/rerank_study.py).
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
from pathlib import Path
from typing import Any

from memlane.bench.datasets import registry

METRICS = ("recall_all@5", "ndcg@10", "turn_recall@L5")
TUNE_UNITS = 5


def _records(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        data: dict[str, list[dict[str, Any]]] = json.load(f)
    return data["locomo"]


def _mean(rows: list[dict[str, float]], metric: str) -> float:
    return statistics.fmean(r[metric] for r in rows)


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.studies.locomo_split")
    p.add_argument("a", type=Path)
    p.add_argument("b", type=Path)
    args = p.parse_args()
    units = [u.unit_id for u in registry.load("locomo", None, registry.DEFAULT_DATA_ROOT).units()]
    tune = set(units[:TUNE_UNITS])
    a, b = _records(args.a), _records(args.b)
    print("| mode | part | category | n | " + " | ".join(f"{m} B → A" for m in METRICS) + " |")
    print("|---|---|---|---|" + "---|" * len(METRICS))
    for mode in sorted({r["mode"] for r in a} & {r["mode"] for r in b}):
        for part in ("tune", "held"):
            for cat in ("all", "1", "2", "3", "4", "5"):

                def pick(
                    rows: list[dict[str, Any]], mode: str = mode, part: str = part, cat: str = cat
                ) -> list[dict[str, float]]:
                    return [
                        r["metrics"]
                        for r in rows
                        if r["mode"] == mode
                        and (r["unit"] in tune) == (part == "tune")
                        and cat in ("all", r["category"])
                    ]

                ma, mb = pick(a), pick(b)
                cells = [f"{_mean(mb, m):.3f} → {_mean(ma, m):.3f}" for m in METRICS]
                print(f"| {mode} | {part} | {cat} | {len(ma)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
