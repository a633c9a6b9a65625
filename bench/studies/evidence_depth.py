"""Study: how deep do the evidence sessions that recall_all@5 misses sit?

LoCoMo's multi-hop questions (category 1) need every evidence session among the first five
distinct sessions. This replays the shipped fusion (z-score 0.5 / 0.5, no time boost) over the
legs recorded by `fusion_study collect` and, for each category, counts the questions that miss,
by how many evidence sessions they have and by the rank of their deepest evidence session. A
miss whose deepest session ranks 6–10 is within reach of a re-ordering; one at rank 20 among a
conversation's 19–32 sessions is ranked no better than chance, and no re-ordering of the same
candidates finds it without a new signal. Nothing here ships.

    python -m bench.studies.fusion_study collect locomo
    python -m bench.studies.evidence_depth locomo [--out F]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from memlane.bench import metrics
from memlane.bench.datasets import registry
from memlane.bench.studies.fusion_study import LEGS_DIR, shipped

BUCKETS = ((6, 10), (11, 15), (16, 20), (21, 30), (31, 10_000))


def _label(low: int, high: int) -> str:
    return f"{low}-{high}" if high < 10_000 else f">{low - 1}"


def _bucket(rank: int) -> str:
    """The bucket of a miss's deepest rank (> 5: a miss)."""
    return next(_label(low, high) for low, high in BUCKETS if low <= rank <= high)


def depths(name: str, pool: int) -> dict[str, Any]:
    fuse = shipped("zscore", 0.5, 0.5)
    dataset = registry.load(name, None, registry.DEFAULT_DATA_ROOT)
    legs = {(r["unit"], r["qid"]): r for r in json.loads((LEGS_DIR / f"{name}.json").read_text())}
    by_cat: dict[str, dict[str, Counter[str]]] = defaultdict(
        lambda: {"questions": Counter(), "missed": Counter(), "deepest": Counter()}
    )
    for unit in dataset.units():
        doc_of_path = unit.doc_of_path()
        for q in unit.queries:
            rec = legs.get((unit.unit_id, q.qid))
            if rec is None or not q.gold_docs:
                continue
            vec = [tuple(e) for e in rec["vector"]]
            kw = [tuple(e) for e in rec["keyword"]]
            where = {e[4]: (e[0], e[1], e[2]) for e in [*vec, *kw]}
            ranked = metrics.distinct_ids([where[c] for c in fuse(vec, kw, pool)], doc_of_path)
            rank_of = {doc: i + 1 for i, doc in enumerate(ranked)}
            deepest = max(rank_of.get(doc, 10_000) for doc in q.gold_docs)
            n_gold = str(len(q.gold_docs)) if len(q.gold_docs) < 5 else "5+"
            for cat in (q.category, "all"):
                by_cat[cat]["questions"][n_gold] += 1
                if deepest > 5:
                    by_cat[cat]["missed"][n_gold] += 1
                    by_cat[cat]["deepest"][_bucket(deepest)] += 1
    return {cat: {k: dict(v) for k, v in parts.items()} for cat, parts in sorted(by_cat.items())}


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.studies.evidence_depth")
    p.add_argument("datasets", nargs="+")
    p.add_argument("--pool", type=int, default=200)
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    report = {name: depths(name, args.pool) for name in args.datasets}
    for name, cats in report.items():
        for cat, parts in cats.items():
            asked = sum(parts["questions"].values())
            missed = sum(parts["missed"].values())
            print(f"\n{name} category {cat}: {missed} of {asked} miss recall_all@5")
            print("  evidence sessions: asked / missed")
            for n in sorted(parts["questions"]):
                print(f"    {n:>3}: {parts['questions'][n]:5} / {parts['missed'].get(n, 0)}")
            print("  deepest evidence session of a miss:")
            for low, high in BUCKETS:
                label = _label(low, high)
                print(f"    rank {label:>6}: {parts['deepest'].get(label, 0)}")
    if args.out:
        args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
