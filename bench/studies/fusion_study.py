"""Fusion study: record both retrieval legs once, then score fusion rules offline.

`collect` indexes a data set exactly as `python -m bench run` does (same workspaces, same
stores under `bench/work/`, so embeddings are shared with the harness), and for every query
records the keyword leg (every matching chunk's bm25 rank, up to --depth) and the cosine of
every chunk that either leg returns in its first --depth (the vector leg is a brute-force
matrix here, so "every chunk" is cheap). `evaluate` replays fusion rules over those records
with the harness's own metrics, so a rule can be compared on every set in seconds. `sweep`
scores a grid of z-score weights against the better single leg on each set's target metrics,
on all queries and on two fixed halves (pick a weight on one half, read it on the other).
The `za_*` rules are unshipped prototypes that weigh each leg by its own confidence on the query
(how far its best candidates stand out); they are reported, and rejected, in bench/RESULTS.md.
So are `z_robust` (each leg standardised by median and MAD) and `z_capped3` (z capped at 3),
session 25.

    python -m bench.studies.fusion_study collect autorag_ko locomo ...
    python -m bench.studies.fusion_study evaluate autorag_ko locomo ... [--pool 200]
    python -m bench.studies.fusion_study sweep autorag_ko locomo ... [--weights 0.3,0.4,0.5]

Records go to `bench/work/legs/<set>.json` (git-ignored, like the stores). This is a study
tool: it reaches into the manager for the store and provider on purpose.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import statistics
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from memlane.application.query_focus import vector_query
from memlane.bench import metrics
from memlane.bench.cli import BENCH_DIR
from memlane.bench.datasets import registry
from memlane.bench.datasets.model import Unit
from memlane.bench.runner import (
    RunOptions,
    limited_units,
    memlane_opener,
    mode_config,
    open_unit,
    score_query,
)
from memlane.bench.workspace import UnitPaths, materialize
from memlane.domain.chunks import ChunkId
from memlane.domain.index_meta import vector_label
from memlane.domain.keywords import build_fts_query
from memlane.domain.scoring import _standardised, rrf_merge, weighted_merge, zscore_merge
from memlane.domain.search import Candidate

LEGS_DIR = BENCH_DIR / "work" / "legs"


@contextmanager
def opened_unit(name: str, unit: Unit, work_dir: Path) -> Iterator[tuple[Any, Any, Any, Path]]:
    """The unit's manager (synced, as `bench run` leaves it), its store, its provider and the
    store's file. A study tool: it reaches into the manager for the store and provider."""
    paths = UnitPaths.for_unit(work_dir, name, unit.unit_id)
    materialize(unit, paths)
    cfg = mode_config("hybrid", "local", paths.store_path("local"), 50, {})
    manager: Any = open_unit(memlane_opener(), paths, cfg)
    try:
        manager.sync(force=False)
        searcher = manager._searching._searcher
        yield manager, searcher._store, searcher._runtime.provider, paths.store_path("local")
    finally:
        manager.close()


def collect(name: str, depth: int, limit: int | None) -> None:
    dataset = registry.load(name, None, registry.DEFAULT_DATA_ROOT)
    multi = len(list(dataset.units())) > 1
    options = RunOptions(
        work_dir=BENCH_DIR / "work",
        limit_units=limit if multi else None,
        limit_queries=None if multi else limit,
    )
    out: list[dict[str, Any]] = []
    for unit in limited_units(dataset, options):
        with opened_unit(name, unit, options.work_dir) as (manager, store, provider, _):
            sources = manager.settings.sources
            for q in unit.queries:
                match = build_fts_query(q.text)
                kw = store.search_keyword(match, sources=sources, limit=100_000) if match else []
                # The text the search's vector leg embeds (application/query_focus.py).
                asked = vector_query(store, q.text, share=manager.settings.query.common_word_share)
                vec_all = store.search_vector(
                    provider.embed_query(asked.text),
                    # The store labels vectors with the model and its configuration key.
                    model=vector_label(provider.model, provider.key),
                    sources=sources,
                    limit=100_000,
                )
                wanted = {c.chunk_id for c in kw[:depth]} | {c.chunk_id for c in vec_all[:depth]}
                out.append(
                    {
                        "unit": unit.unit_id,
                        "qid": q.qid,
                        "keyword": [
                            (c.path, c.start_line, c.end_line, -c.score, c.chunk_id) for c in kw
                        ],
                        "vector": [
                            (c.path, c.start_line, c.end_line, c.score, c.chunk_id)
                            for c in vec_all
                            if c.chunk_id in wanted
                        ],
                        "n_chunks": len(vec_all),
                    }
                )
        print(f"{name}/{unit.unit_id}: {len(unit.queries)} queries", flush=True)
    LEGS_DIR.mkdir(parents=True, exist_ok=True)
    (LEGS_DIR / f"{name}.json").write_text(json.dumps(out))


# --- fusion rules over recorded legs ---------------------------------------------------------

Leg = list[tuple[str, int, int, float, str]]
Rule = Callable[[Leg, Leg, int], list[str]]


def _top(leg: Leg, pool: int) -> dict[str, float]:
    return {cid: s for *_, s, cid in sorted(leg, key=lambda e: -e[3])[:pool]}


def linear_bm25_weighted(vw: float, tw: float) -> Rule:
    """Not shipped: vw·cosine + tw·(bm25 evidence / the best), i.e. the weighted sum without the
    saturating x/(1+x). Kept as the measured alternative to standardising."""

    def rule(vec: Leg, kw: Leg, pool: int) -> list[str]:
        v_top, k_top = _top(vec, pool), _top(kw, pool)
        best = max(k_top.values(), default=0.0) or 1.0
        ids = list(dict.fromkeys([*v_top, *k_top]))
        score = {c: vw * v_top.get(c, 0.0) + tw * max(0.0, k_top.get(c, 0.0)) / best for c in ids}
        return sorted(ids, key=lambda c: -score[c])

    return rule


def single(which: str) -> Rule:
    def rule(vec: Leg, kw: Leg, pool: int) -> list[str]:
        leg = vec if which == "vector" else kw
        return [e[4] for e in sorted(leg, key=lambda e: -e[3])[:pool]]

    return rule


def _candidates(leg: Leg, pool: int, *, keyword: bool) -> list[Candidate]:
    top = sorted(leg, key=lambda e: -e[3])[:pool]
    return [
        Candidate(
            chunk_id=ChunkId(cid),
            source="memory",
            path=path,
            start_line=start,
            end_line=end,
            text="",
            score=-score if keyword else score,
        )
        for path, start, end, score, cid in top
    ]


def shipped(fusion: str, vector_weight: float = 0.0, text_weight: float = 0.0) -> Rule:
    """The domain's own fusion functions, so the study measures exactly what ships."""

    def rule(vec: Leg, kw: Leg, pool: int) -> list[str]:
        v = _candidates(vec, pool, keyword=False)
        k = _candidates(kw, pool, keyword=True)
        if fusion == "rrf":
            fused = rrf_merge(v, k)
        elif fusion == "weighted":
            fused = weighted_merge(v, k, vector_weight=vector_weight, text_weight=text_weight)
        else:
            fused = zscore_merge(v, k, vector_weight=vector_weight, text_weight=text_weight)
        return [item.chunk_id for item in fused]

    return rule


def adaptive_z(confidence: str) -> Rule:
    """Prototype: z-score fusion whose leg weights follow each leg's own confidence on this
    query (how far its best candidates stand out of its pool)."""

    def conf_of(z: dict[ChunkId, float]) -> float:
        top = sorted(z.values(), reverse=True)
        if not top:
            return 0.0
        if confidence == "max":
            return max(top[0], 0.0)
        if confidence == "top3":
            return max(statistics.fmean(top[:3]), 0.0)
        if confidence == "gap5":
            return max(top[0] - top[min(4, len(top) - 1)], 0.0)
        raise ValueError(confidence)

    def standardised(leg: Leg, pool: int) -> tuple[dict[ChunkId, float], float]:
        return _standardised({ChunkId(c): s for c, s in _top(leg, pool).items()})

    def rule(vec: Leg, kw: Leg, pool: int) -> list[str]:
        z_v, f_v = standardised(vec, pool)
        z_k, f_k = standardised(kw, pool)
        c_v, c_k = conf_of(z_v), conf_of(z_k)
        w_v, w_k = (0.5, 0.5) if c_v + c_k <= 0 else (c_v / (c_v + c_k), c_k / (c_v + c_k))
        ids = list(dict.fromkeys([*z_v, *z_k]))
        score = {c: w_v * z_v.get(c, f_v) + w_k * z_k.get(c, f_k) for c in ids}
        ranked: list[ChunkId] = sorted(ids, key=lambda c: -score[c])
        return list(ranked)

    return rule


def _robust_z(scores: dict[str, float]) -> tuple[dict[str, float], float]:
    """z by median and MAD (x 1.4826, the sd of a normal sample), sd when the MAD is 0."""
    values = list(scores.values())
    if not values:
        return {}, 0.0
    middle = statistics.median(values)
    spread = statistics.median([abs(v - middle) for v in values]) * 1.4826
    spread = spread if spread > 1e-12 else statistics.pstdev(values)
    if spread <= 1e-12:
        return dict.fromkeys(scores, 0.0), -1.0
    z = {c: (v - middle) / spread for c, v in scores.items()}
    return z, min(z.values())


def _capped_z(scores: dict[str, float], cap: float = 3.0) -> tuple[dict[str, float], float]:
    """The shipped z (mean, population sd), capped at `cap`: no one outlier decides."""
    z, floor = _standardised({ChunkId(c): s for c, s in scores.items()})
    return {c: min(cap, v) for c, v in z.items()}, floor


def standardised_by(
    standardise: Callable[[dict[str, float]], tuple[dict[str, float], float]],
) -> Rule:
    """Prototype (session 25): equal-weight z fusion with another standardisation of each leg
    (bm25 evidence floored at 0, as the shipped rule reads it)."""

    def rule(vec: Leg, kw: Leg, pool: int) -> list[str]:
        v = _top(vec, pool)
        k = {c: max(0.0, s) for c, s in _top(kw, pool).items()}
        legs = [leg for leg in (standardise(v), standardise(k)) if leg[0]]
        ids = list(dict.fromkeys([*v, *k]))
        score = {c: math.fsum(z.get(c, floor) for z, floor in legs) for c in ids}
        return sorted(ids, key=lambda c: -score[c])

    return rule


RULES: dict[str, Rule] = {
    "keyword": single("keyword"),
    "vector": single("vector"),
    "w73_sat": shipped("weighted", 0.7, 0.3),
    "w73_max": linear_bm25_weighted(0.7, 0.3),
    "rrf60": shipped("rrf"),
    "z70": shipped("zscore", 0.7, 0.3),
    "z50": shipped("zscore", 0.5, 0.5),
    "z40": shipped("zscore", 0.4, 0.6),
    "z30": shipped("zscore", 0.3, 0.7),
    "za_max": adaptive_z("max"),
    "za_top3": adaptive_z("top3"),
    "za_gap5": adaptive_z("gap5"),
    "z_robust": standardised_by(_robust_z),
    "z_capped3": standardised_by(_capped_z),
}

SHOW = ("ndcg@10", "recall@5", "recall_all@5", "turn_recall@L5", "turn_recall@L10")


QueryKey = tuple[str, str]
Scores = dict[str, float]


@dataclass(frozen=True)
class RecordedQuery:
    """One recorded query: its legs, where each candidate chunk sits, and how to score hits."""

    key: QueryKey
    vector: Leg
    keyword: Leg
    where: dict[str, metrics.Hit]  # chunk id -> (path, start, end)
    score: Callable[[Sequence[metrics.Hit]], Scores]

    def hits(self, rule: str, pool: int, keep: int) -> list[metrics.Hit]:
        return [self.where[c] for c in RULES[rule](self.vector, self.keyword, pool)[:keep]]


def recorded_queries(name: str) -> Iterator[RecordedQuery]:
    """Every query of one set with recorded legs, in the data set's order."""
    dataset = registry.load(name, None, registry.DEFAULT_DATA_ROOT)
    records = json.loads((LEGS_DIR / f"{name}.json").read_text())
    by_key = {(r["unit"], r["qid"]): r for r in records}
    for unit in dataset.units():
        doc_of_path = unit.doc_of_path()
        for q in unit.queries:
            rec = by_key.get((unit.unit_id, q.qid))
            if rec is None:
                continue
            vec = [tuple(e) for e in rec["vector"]]
            kw = [tuple(e) for e in rec["keyword"]]
            yield RecordedQuery(
                key=(unit.unit_id, q.qid),
                vector=vec,
                keyword=kw,
                where={e[4]: (e[0], e[1], e[2]) for e in [*vec, *kw]},
                score=partial(
                    score_query, q, doc_of_path=doc_of_path, turn_level=dataset.turn_level
                ),
            )


def score_rules(
    name: str, rules: Sequence[str], pool: int, keep: int
) -> dict[str, list[tuple[QueryKey, Scores]]]:
    """Every rule's metrics on every recorded query of one set, keyed by (unit, qid)."""
    rows: dict[str, list[tuple[QueryKey, Scores]]] = {r: [] for r in rules}
    for recorded in recorded_queries(name):
        for rname in rules:
            rows[rname].append((recorded.key, recorded.score(recorded.hits(rname, pool, keep))))
    return rows


def evaluate(names: Sequence[str], rules: Sequence[str], pool: int, keep: int) -> None:
    for name in names:
        rows = score_rules(name, rules, pool, keep)
        first = next(iter(rows.values()))
        n = len(first)
        cols = [m for m in SHOW if m in first[0][1]] if n else []
        print(f"\n{name} (n={n}, pool {pool})")
        print(f"{'rule':14}" + "".join(f"{c:>16}" for c in cols))
        for rname, vals in rows.items():
            means = [statistics.fmean(v[c] for _, v in vals) for c in cols]
            print(f"{rname:14}" + "".join(f"{m:16.3f}" for m in means))


# --- weight sweep: is there one z-score weight that never loses to the better single leg? ------

# The metrics each set's targets are stated in (issue #7); every other set is judged by nDCG@10.
PRIMARY: dict[str, tuple[str, ...]] = {
    "locomo": ("recall_all@5", "turn_recall@L5"),
    "lme_pooled": ("recall_all@5", "ndcg@10"),
    "lme_s": ("recall_all@5", "ndcg@10"),
    "lme_s_official": ("recall_all@5", "ndcg@10"),
}
HALVES = ("A", "B", "all")


def half_of(key: QueryKey) -> str:
    """A fixed, content-independent split of the queries into two halves."""
    digest = hashlib.sha256(f"{key[0]}/{key[1]}".encode()).digest()
    return "A" if digest[0] % 2 == 0 else "B"


def half_means(vals: Sequence[tuple[QueryKey, Scores]], metric: str) -> dict[str, float]:
    parts: dict[str, list[float]] = {h: [] for h in HALVES}
    for key, scores in vals:
        parts[half_of(key)].append(scores[metric])
        parts["all"].append(scores[metric])
    return {h: statistics.fmean(v) if v else math.nan for h, v in parts.items()}


def worst_margin(rows: Sequence[dict[str, dict[str, float]]], rule: str, half: str) -> float:
    """Smallest (rule − better of keyword and vector) over the (set, metric) rows."""
    return min(r[rule][half] - max(r["keyword"][half], r["vector"][half]) for r in rows)


def sweep(names: Sequence[str], weights: Sequence[float], pool: int, keep: int) -> None:
    zrules = {f"z{w:.2f}": shipped("zscore", w, 1.0 - w) for w in weights}
    RULES.update(zrules)
    rules = ["keyword", "vector", *zrules]
    table: dict[str, dict[str, dict[str, float]]] = {}
    for name in names:
        rows = score_rules(name, rules, pool, keep)
        for metric in PRIMARY.get(name, ("ndcg@10",)):
            table[f"{name} {metric}"] = {r: half_means(rows[r], metric) for r in rules}
    print(f"\nvector weight sweep (z-score fusion, keyword weight = 1 - w; pool {pool})")
    print(f"{'set, metric':30}" + "".join(f"{r:>8}" for r in rules))
    for label, by_rule in table.items():
        print(f"{label:30}" + "".join(f"{by_rule[r]['all']:8.3f}" for r in rules))
    print("worst margin over the rows vs the better single leg (>= 0: never below it):")
    summary = list(table.values())
    for half in HALVES:
        margins = [worst_margin(summary, r, half) for r in zrules]
        print(f"{'  queries ' + half:30}{'':16}" + "".join(f"{m:+8.3f}" for m in margins))
    for pick, check in (("A", "B"), ("B", "A")):
        best = max(zrules, key=lambda r: worst_margin(summary, r, pick))
        print(
            f"  best on half {pick}: {best} (margin {worst_margin(summary, best, pick):+.3f});"
            f" on half {check}: {worst_margin(summary, best, check):+.3f}"
        )


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.studies.fusion_study")
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("datasets", nargs="+")
    c.add_argument("--depth", type=int, default=200)
    c.add_argument("--limit", type=int)
    e = sub.add_parser("evaluate")
    e.add_argument("datasets", nargs="+")
    e.add_argument("--rules", default=",".join(RULES))
    e.add_argument("--pool", type=int, default=200)
    e.add_argument("--keep", type=int, default=50)
    w = sub.add_parser("sweep")
    w.add_argument("datasets", nargs="+")
    w.add_argument("--weights", default="0.25,0.3,0.35,0.4,0.45,0.5,0.55,0.6,0.65,0.7")
    w.add_argument("--pool", type=int, default=200)
    w.add_argument("--keep", type=int, default=50)
    args = p.parse_args()
    if args.cmd == "collect":
        for name in args.datasets:
            collect(name, args.depth, args.limit)
    elif args.cmd == "sweep":
        weights = [float(x) for x in args.weights.split(",")]
        sweep(args.datasets, weights, args.pool, args.keep)
    else:
        evaluate(args.datasets, args.rules.split(","), args.pool, args.keep)


if __name__ == "__main__":
    main()
