"""Study: search quality while the vector backfill is under way (issue #18).

During a first index's backfill only a share `p` of the chunks has a vector. Two ways to answer
then: keyword-only until (nearly) every vector is in, or hybrid over what has vectors (the
vector leg ranks the embedded chunks, the keyword leg all). This replays the legs
`bench/studies/fusion_study.py collect` recorded (full coverage) with coverage `p`: the vector leg
keeps
the embedded chunks of its recorded candidates, and the shipped z-score fusion runs on that,
against keyword-only and full hybrid on the same queries.

Which chunks lack a vector at coverage p (`--orders`): the last round((1 - p)·n) chunks of a
unit's n in one of these orders (the backfill embeds in rid order, i.e. the order the first
index wrote the files):
- `random`: chunks in a seeded hash order (missing vectors scattered over every file);
- `files`: files in a seeded hash order, each file's chunks together (a first index lists
  session files in directory order and hash-named notes by name: whole files come last);
- `recent`: files oldest first by their first timestamp, undated notes by path, the order a
  first index of dated files (memory/YYYY-MM-DD.md, transcripts) writes: the newest lack
  vectors (one draw: the order is fixed).
`random` and `files` take `--seeds` draws (seeds 0..n-1, in the JSON); a query's score at a
coverage is its mean over the draws, and the paired bootstrap (`bench/metrics.py`, seed 0)
compares those per-query scores with keyword-only and with full hybrid.

Approximation: the recorded vector leg is its top `--depth` (200), so at coverage p the partial
leg has about p·200 candidates where the store would return 200 (the deeper ones score lower and
only move the leg's mean and spread a little). The chunk lists come from the unit's store under
`bench/work/` (read-only), which `collect` synced.

    python -m memlane.bench.studies.fusion_study collect locomo xquad_zh lme_pooled
    python -m memlane.bench.studies.partial_vectors locomo xquad_zh lme_pooled \
        [--coverage 0.75,0.9,...,1] [--orders random,files,recent] [--seeds 5] [--out NAME]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sqlite3
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from memlane.bench import metrics
from memlane.bench.cli import BENCH_DIR
from memlane.bench.datasets import registry
from memlane.bench.datasets.model import Unit
from memlane.bench.runner import score_query
from memlane.bench.studies.fusion_study import LEGS_DIR, RULES, Leg, _candidates
from memlane.bench.workspace import UnitPaths
from memlane.domain.chunks import ChunkId
from memlane.domain.scoring import _keyword_evidence, _standardised, _vector_scores

RESULTS = Path(__file__).parent.parent / "results"
POOL = 200
KEEP = 50
ORDERS = ("random", "files", "recent")
# nDCG@10 for every set, and the recall each set's targets are stated in.
RECALL: dict[str, tuple[str, ...]] = {
    "locomo": ("recall_all@5", "turn_recall@L5"),
    "lme_pooled": ("recall_all@5",),
    "lme_s": ("recall_all@5",),
}
_STAMP = re.compile(r'"timestamp": "([^"]+)"')


@dataclass(frozen=True, slots=True)
class StoredChunk:
    chunk_id: str
    path: str
    start_line: int


def _draw(seed: int, key: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}:{key}".encode()).digest()[:8], "big")


def stored_chunks(name: str, unit_id: str) -> list[StoredChunk]:
    """Every chunk of the unit's store (opened read-only: nothing is migrated or written)."""
    store = UnitPaths.for_unit(BENCH_DIR / "work", name, unit_id).store_path("local")
    conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT id, path, start_line FROM chunks").fetchall()
    finally:
        conn.close()
    return [StoredChunk(str(i), str(p), int(s)) for i, p, s in rows]


def file_stamps(unit: Unit) -> dict[str, str]:
    """The first timestamp of each file, "" for a file without one (an undated note)."""
    out: dict[str, str] = {}
    for f in unit.files:
        found = _STAMP.search(f.text)
        out[f.indexed_path] = found.group(1) if found else ""
    return out


def backfill_order(
    order: str, chunks: Sequence[StoredChunk], stamps: dict[str, str], seed: int
) -> list[str]:
    """The chunk ids in the order the simulated backfill gives them vectors."""
    if order == "random":
        ranked = sorted(chunks, key=lambda c: _draw(seed, c.chunk_id))
    elif order == "files":
        ranked = sorted(chunks, key=lambda c: (_draw(seed, c.path), c.start_line))
    elif order == "recent":
        ranked = sorted(chunks, key=lambda c: (stamps.get(c.path, ""), c.path, c.start_line))
    else:
        raise ValueError(f"unknown order {order!r}")
    return [c.chunk_id for c in ranked]


def missing(ordered: Sequence[str], coverage: float) -> set[str]:
    """The chunks still without a vector once a share `coverage` of them is embedded."""
    lacking = round((1.0 - coverage) * len(ordered))
    return set(ordered[len(ordered) - lacking :]) if lacking else set()


def _neutral(vec: Leg, kw: Leg, lacking: set[str]) -> list[str]:
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
        return k + 0.5 * z_v.get(cid, 0.0 if c in lacking else floor_v)

    return sorted(ids, key=lambda c: -score(c))


def _add(
    all_scores: dict[str, dict[str, list[float]]],
    all_draws: dict[str, dict[str, list[list[float]]]],
    wanted: Sequence[str],
    label: str,
    rankings: Sequence[list[str]],
    *,
    where: dict[str, metrics.Hit],
    score: Callable[[list[metrics.Hit]], dict[str, float]],
) -> None:
    """Add one query's scores under `label`: the mean over its draws, and each draw's own."""
    scores, draw_scores = all_scores[label], all_draws[label]
    measured = [score([where[c] for c in ranked[:KEEP]]) for ranked in rankings]
    for m in wanted:
        values = [r.get(m, 0.0) for r in measured]
        scores[m].append(statistics.fmean(values))
        cells = draw_scores.setdefault(m, [[] for _ in rankings])
        for i, v in enumerate(values):
            cells[i].append(v)


def study(
    name: str,
    coverages: Sequence[float],
    orders: Sequence[str],
    seeds: int,
    neutral: bool = False,
) -> dict[str, Any]:
    dataset = registry.load(name, None, registry.DEFAULT_DATA_ROOT)
    records = json.loads((LEGS_DIR / f"{name}.json").read_text())
    by_key = {(r["unit"], r["qid"]): r for r in records}
    hybrid, keyword = RULES["z50"], RULES["keyword"]
    wanted = ("ndcg@10", *RECALL.get(name, ("recall@5",)))
    plan = [
        (order, p, [0] if order == "recent" else list(range(seeds)))
        for order in orders
        for p in coverages
    ]
    labels = ["keyword-only", "hybrid (full)"] + [f"{o}@{p:g}" for o, p, _ in plan]
    if neutral:
        labels += [f"neutral-{o}@{p:g}" for o, p, _ in plan]
    scores: dict[str, dict[str, list[float]]] = {lab: {m: [] for m in wanted} for lab in labels}
    draw_scores: dict[str, dict[str, list[list[float]]]] = {lab: {} for lab in labels}
    lacking_count: dict[str, list[int]] = {}
    total_chunks = 0

    for unit in dataset.units():
        doc_of_path = unit.doc_of_path()
        chunks = stored_chunks(name, unit.unit_id)
        total_chunks += len(chunks)
        stamps = file_stamps(unit)
        lacking_of: dict[tuple[str, float, int], set[str]] = {}
        for order, p, draws in plan:
            for seed in draws:
                gone = missing(backfill_order(order, chunks, stamps, seed), p)
                lacking_of[(order, p, seed)] = gone
            counts = lacking_count.setdefault(f"{order}@{p:g}", [0] * len(draws))
            for i, seed in enumerate(draws):
                counts[i] += len(lacking_of[(order, p, seed)])
        for q in unit.queries:
            rec = by_key.get((unit.unit_id, q.qid))
            if rec is None:
                continue
            vec: Leg = [tuple(e) for e in rec["vector"]]
            kw: Leg = [tuple(e) for e in rec["keyword"]]
            where = {e[4]: (e[0], e[1], e[2]) for e in [*vec, *kw]}

            score = partial(score_query, q, doc_of_path=doc_of_path, turn_level=dataset.turn_level)

            add = partial(_add, scores, draw_scores, wanted, where=where, score=score)
            add("keyword-only", [keyword(vec, kw, POOL)])
            add("hybrid (full)", [hybrid(vec, kw, POOL)])
            for order, p, draws in plan:
                runs: list[list[str]] = []
                neutral_runs: list[list[str]] = []
                for seed in draws:
                    gone = lacking_of[(order, p, seed)]
                    embedded = [e for e in vec if e[4] not in gone]
                    runs.append(hybrid(embedded, kw, POOL))
                    if neutral:
                        neutral_runs.append(_neutral(embedded, kw, gone))
                add(f"{order}@{p:g}", runs)
                if neutral:
                    add(f"neutral-{order}@{p:g}", neutral_runs)
    return _summarise(wanted, plan, scores, draw_scores, lacking_count, total_chunks)


def _summarise(
    wanted: Sequence[str],
    plan: Sequence[tuple[str, float, list[int]]],
    scores: dict[str, dict[str, list[float]]],
    draw_scores: dict[str, dict[str, list[list[float]]]],
    lacking_count: dict[str, list[int]],
    total_chunks: int,
) -> dict[str, Any]:
    """Means, per-draw means and paired bootstrap CIs against keyword-only and full hybrid."""
    rows: dict[str, Any] = {}
    meta = {f"{o}@{p:g}": (o, p, d) for o, p, d in plan}
    for label, cells in scores.items():
        base = label.removeprefix("neutral-")
        row: dict[str, Any] = {"mean": {m: round(statistics.fmean(v), 4) for m, v in cells.items()}}
        if base in meta:
            order, p, draws = meta[base]
            row |= {
                "order": order,
                "coverage": p,
                "seeds": draws,
                "missing_share": [round(c / total_chunks, 5) for c in lacking_count[base]],
                "draw_means": {
                    m: [round(statistics.fmean(d), 4) for d in draw_scores[label][m]]
                    for m in wanted
                },
            }
        for against in ("keyword-only", "hybrid (full)"):
            if label == against:
                continue
            key = "vs_keyword" if against == "keyword-only" else "vs_full"
            row[key] = {}
            for m in wanted:
                c = metrics.paired_bootstrap(cells[m], scores[against][m], seed=0)
                row[key][m] = {
                    "diff": round(c.mean_diff, 4),
                    "ci": [round(c.ci_low, 4), round(c.ci_high, 4)],
                    "p": round(c.p_value, 4),
                }
        rows[label] = row
    return {
        "queries": len(next(iter(scores["keyword-only"].values()))),
        "chunks": total_chunks,
        "metrics": list(wanted),
        "rows": rows,
        "threshold": thresholds(rows, plan),
    }


def thresholds(rows: dict[str, Any], plan: Sequence[tuple[str, float, list[int]]]) -> Any:
    """Per order: the largest missing share (1 - coverage) up to which hybrid over the partial
    vectors is, at every measured coverage from there to full, not worse than keyword-only
    (95 % CI upper bound >= 0 on every metric: "not_worse") and better on nDCG@10 (CI lower
    bound > 0: "better")."""
    out: dict[str, dict[str, float | None]] = {}
    for order in dict.fromkeys(o for o, _, _ in plan):
        steps = sorted((p for o, p, _ in plan if o == order and p < 1.0), reverse=True)
        found: dict[str, float | None] = {}
        for test in ("not_worse", "better"):
            share: float | None = 0.0
            for p in steps:
                vs = rows[f"{order}@{p:g}"]["vs_keyword"]
                ok = (
                    all(c["ci"][1] >= 0 for c in vs.values())
                    if test == "not_worse"
                    else vs["ndcg@10"]["ci"][0] > 0
                )
                if not ok:
                    break
                share = round(1.0 - p, 6)
            found[test] = share
        out[order] = found
    return out


def _print(name: str, doc: dict[str, Any]) -> None:
    wanted = doc["metrics"]
    print(f"\n{name}: {doc['queries']} queries, {doc['chunks']} chunks")
    head = f"{'rule':18}{'missing':>9}" + "".join(f"{m:>16}" for m in wanted)
    print(head + "".join(f"{'Δ ' + m + ' vs kw [95% CI]':>34}" for m in wanted))
    for label, row in doc["rows"].items():
        share = statistics.fmean(row["missing_share"]) if "missing_share" in row else None
        line = f"{label:18}" + (f"{share:9.4f}" if share is not None else f"{'':9}")
        line += "".join(f"{row['mean'][m]:16.4f}" for m in wanted)
        for m in wanted:
            c = row.get("vs_keyword", {}).get(m)
            cell = f"{c['diff']:+.4f} [{c['ci'][0]:+.4f}, {c['ci'][1]:+.4f}]" if c else ""
            line += f"{cell:>34}"
        print(line)
    print(f"threshold (largest missing share): {doc['threshold']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sets", nargs="+")
    parser.add_argument("--coverage", default="0,0.1,0.25,0.5,0.75,0.9,1")
    parser.add_argument("--orders", default="random")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument(
        "--neutral", action="store_true", help="also the unshipped 'no vector = z 0' rule"
    )
    parser.add_argument("--out", default="partial_vectors")
    args = parser.parse_args()
    coverages = [float(c) for c in args.coverage.split(",")]
    orders = args.orders.split(",")
    if unknown := set(orders) - set(ORDERS):
        parser.error(f"unknown orders: {sorted(unknown)} (known: {', '.join(ORDERS)})")
    doc: dict[str, Any] = {}
    for name in args.sets:
        doc[name] = study(name, coverages, orders, args.seeds, args.neutral)
        _print(name, doc[name])
    sets = list(doc.values())
    doc["rule"] = {
        test: min(
            (
                t[test] if t[test] is not None else 0.0
                for d in sets
                for t in d["threshold"].values()
            ),
            default=None,
        )
        for test in ("not_worse", "better")
    }
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"{args.out}.json"
    out.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"\nmost conservative over sets and orders: {doc['rule']}\n-> {out}")


if __name__ == "__main__":
    main()
