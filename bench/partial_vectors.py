"""Study: search quality while the vector backfill is under way (issue #18).

During a first index's backfill only a share `p` of the chunks has a vector. Two ways to answer
then: keyword-only until every vector is in, or what memlane ships, hybrid over what has vectors
(the vector leg ranks the embedded chunks, the keyword leg all) with a warning. This replays the
legs `bench/fusion_study.py collect` recorded (full coverage) with coverage `p`: a chunk counts as
embedded when a seeded hash of its id falls below `p` (the backfill goes in rid order, which is
unrelated to relevance), the vector leg keeps the embedded chunks of its recorded candidates, and
the shipped z-score fusion runs on that, against keyword-only and full hybrid on the same queries.
Approximation: the recorded vector leg is its top `--depth` (200), so at coverage p the partial
leg has about p·200 candidates where the store would return 200 (the deeper ones score lower and
only move the leg's mean and spread a little).

    python -m memlane.bench.fusion_study collect locomo lme_pooled
    python -m memlane.bench.partial_vectors locomo lme_pooled [--coverage 0,0.1,0.25,0.5,0.75,0.9,1]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
from pathlib import Path
from typing import Any

from memlane.bench import metrics
from memlane.bench.datasets import registry
from memlane.bench.fusion_study import LEGS_DIR, PRIMARY, RULES, Leg, _candidates
from memlane.bench.runner import score_query
from memlane.domain.chunks import ChunkId
from memlane.domain.scoring import _keyword_evidence, _standardised, _vector_scores

RESULTS = Path(__file__).parent / "results"
POOL = 200
KEEP = 50


def _embedded(chunk_id: str, coverage: float, seed: int) -> bool:
    digest = hashlib.sha256(f"{seed}:{chunk_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < coverage


def _neutral(vec: Leg, kw: Leg, embedded: set[str]) -> list[str]:
    """Not shipped: the z-score fusion (0.5 / 0.5), except that a chunk with no vector yet takes
    the vector leg's mean (z = 0, "unknown") instead of its floor; an embedded chunk the leg did
    not return keeps the floor, as in the shipped rule."""
    z_v, floor_v = _standardised(_vector_scores(_candidates(vec, POOL, keyword=False)))
    z_k, floor_k = _standardised(_keyword_evidence(_candidates(kw, POOL, keyword=True)))
    ids = list(
        dict.fromkeys(
            [e[4] for e in sorted(vec, key=lambda e: -e[3])[:POOL]]
            + [e[4] for e in sorted(kw, key=lambda e: -e[3])[:POOL]]
        )
    )

    def score(c: str) -> float:
        cid = ChunkId(c)
        k = 0.5 * z_k.get(cid, floor_k) if z_k else 0.0
        if not z_v:
            return k
        return k + 0.5 * z_v.get(cid, floor_v if c in embedded else 0.0)

    return sorted(ids, key=lambda c: -score(c))


def study(name: str, coverages: list[float], seeds: int, neutral: bool = False) -> dict[str, Any]:
    """Mean metrics per coverage (averaged over `seeds` draws of which chunks are embedded)."""
    dataset = registry.load(name, None, registry.DEFAULT_DATA_ROOT)
    records = json.loads((LEGS_DIR / f"{name}.json").read_text())
    by_key = {(r["unit"], r["qid"]): r for r in records}
    hybrid, keyword = RULES["z50"], RULES["keyword"]
    wanted = PRIMARY.get(name, ("ndcg@10",))
    sums: dict[str, dict[str, list[float]]] = {}

    def add(row: str, scores: dict[str, float]) -> None:
        cell = sums.setdefault(row, {})
        for metric in (*wanted, "ndcg@10"):
            if metric in scores:
                cell.setdefault(metric, []).append(scores[metric])

    for unit in dataset.units():
        doc_of_path = unit.doc_of_path()
        for q in unit.queries:
            rec = by_key.get((unit.unit_id, q.qid))
            if rec is None:
                continue
            vec: Leg = [tuple(e) for e in rec["vector"]]
            kw: Leg = [tuple(e) for e in rec["keyword"]]
            where = {e[4]: (e[0], e[1], e[2]) for e in [*vec, *kw]}
            runs = [("keyword-only", keyword(vec, kw, POOL))]
            for p in coverages:
                for seed in range(seeds):
                    partial = [e for e in vec if _embedded(e[4], p, seed)]
                    runs.append((f"hybrid@{p:g}", hybrid(partial, kw, POOL)))
                    if neutral:
                        embedded = {e[4] for e in [*vec, *kw] if _embedded(e[4], p, seed)}
                        runs.append((f"neutral@{p:g}", _neutral(partial, kw, embedded)))
            for row, ranked in runs:
                hits: list[metrics.Hit] = [where[c] for c in ranked[:KEEP]]
                add(row, score_query(q, hits, doc_of_path, turn_level=dataset.turn_level))
    return {
        row: {m: round(statistics.fmean(v), 4) for m, v in cells.items()}
        for row, cells in sums.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sets", nargs="+")
    parser.add_argument("--coverage", default="0,0.1,0.25,0.5,0.75,0.9,1")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument(
        "--neutral", action="store_true", help="also the unshipped 'no vector = z 0' rule"
    )
    parser.add_argument("--out", default="partial_vectors")
    args = parser.parse_args()
    coverages = [float(c) for c in args.coverage.split(",")]
    doc = {name: study(name, coverages, args.seeds, args.neutral) for name in args.sets}
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"{args.out}.json"
    out.write_text(json.dumps(doc, indent=2) + "\n")
    for name, rows in doc.items():
        cols = list(next(iter(rows.values())))
        print(f"\n{name}")
        print(f"{'rule':16}" + "".join(f"{c:>16}" for c in cols))
        for row, cells in rows.items():
            print(f"{row:16}" + "".join(f"{cells.get(c, float('nan')):16.4f}" for c in cols))
    print(f"-> {out}")


if __name__ == "__main__":
    main()
