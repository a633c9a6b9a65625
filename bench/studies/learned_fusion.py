"""Study: would a fusion learned from the two legs' ranks and z-scores rank better than 0.5 / 0.5?

Every fusion rule tried so far was chosen by hand (weights, RRF, compression, adaptive weights)
or per question (`fusion_selector`: one weight per question). This one learns a linear score per
candidate chunk from model-agnostic features of both legs (no raw cosine, no raw bm25, so a
weight means the same for every provider and language):

    z_vec, z_kw      each leg's z-score, a missed chunk at the leg's floor (what ships)
    in_vec, in_kw    whether the leg fetched the chunk at all
    rr_vec, rr_kw    10 / (10 + rank) in each leg, 0 when missed (the shape of RRF)
    z_min, z_max     the lower and the higher of the two z-scores (agreement, one strong leg)

The shipped rule is the weights (0.5, 0.5, 0, …), so the learned rule starts there and is pulled
back to it (L2 on the distance), and its replay with those weights is the shipped replay. The
protocol, fixed before any run:

- train on half A (`fusion_study.half_of`) of every set with recorded legs, each set weighted
  equally; the regularisation chosen by two folds inside half A (a second hash bit), on the
  mean over sets of nDCG@10 (and turn recall at 5 lines where a set has turns);
- report on half B of every set, paired bootstrap against the shipped replay, every category
  of half B with at least 8 questions (`piece_vectors.paired_table`).

Labels, per candidate: 2 when it covers a gold line (sets with turns), 1 when its document is
gold, else 0. Pairs: every labelled candidate against every unlabelled one among the shipped
replay's first 30, and 2 against 1.

    python -m bench.studies.learned_fusion locomo lme_pooled ... [--out F]

Note sets mix a chunk's best piece into its cosine first (mix50, as the search does).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memlane.bench.datasets import registry
from memlane.bench.runner import score_query
from memlane.bench.studies.fusion_study import Leg, half_of
from memlane.bench.studies.latent_terms import NOTE_SETS, shipped_legs
from memlane.bench.studies.piece_vectors import SHOW, by_question, paired_table
from memlane.bench.studies.replay_cells import result_path
from memlane.domain.chunks import ChunkId
from memlane.domain.scoring import _standardised

FEATURES = ("z_vec", "z_kw", "in_vec", "in_kw", "rr_vec", "rr_kw", "z_min", "z_max")
BASE_WEIGHTS = np.array([0.5, 0.5, 0, 0, 0, 0, 0, 0], dtype=np.float64)
POOL = 200  # per leg, as a default search fetches
KEEP = 50
NEGATIVE_DEPTH = 30  # unlabelled candidates paired with the labelled, from the shipped top
RR_K = 10.0
LAMBDAS = (0.01, 0.1, 1.0)


def candidate_features(
    vec: Leg, kw: Leg, pool: int, maxsim: dict[str, float] | None
) -> tuple[list[str], np.ndarray]:
    """The candidates (the union of both legs' top `pool`, in the shipped replay's id order)
    and their feature rows."""
    v_top, k_top, cosine, evidence = shipped_legs(vec, kw, pool, maxsim)
    z_v, floor_v = _standardised(cosine) if cosine else ({}, 0.0)
    z_k, floor_k = _standardised(evidence) if evidence else ({}, 0.0)
    rank_v = {c: i for i, c in enumerate(sorted(cosine, key=lambda c: -cosine[c]))}
    rank_k = {c: i for i, c in enumerate(sorted(evidence, key=lambda c: -evidence[c]))}
    order = list(dict.fromkeys([*(e[4] for e in v_top), *(e[4] for e in k_top)]))
    rows = np.zeros((len(order), len(FEATURES)))
    for i, c in enumerate(order):
        cid = ChunkId(c)
        zv = z_v.get(cid, floor_v) if cosine else 0.0
        zk = z_k.get(cid, floor_k) if evidence else 0.0
        rows[i] = (
            zv,
            zk,
            float(cid in z_v),
            float(cid in z_k),
            RR_K / (RR_K + rank_v[cid]) if cid in rank_v else 0.0,
            RR_K / (RR_K + rank_k[cid]) if cid in rank_k else 0.0,
            min(zv, zk),
            max(zv, zk),
        )
    return order, rows


def ranked(order: list[str], rows: np.ndarray, weights: np.ndarray) -> list[str]:
    """Candidates by score, best first; ties keep the candidate order (as the replay does)."""
    score = rows @ weights
    return [order[i] for i in sorted(range(len(order)), key=lambda i: -score[i])]


@dataclass
class Question:
    """One recorded question, ready to replay: its candidates' rows, hits and labels."""

    set_name: str
    key: tuple[str, str]
    query: Any
    doc_of: dict[str, str]
    turn_level: bool
    order: list[str]
    rows: np.ndarray
    hits: list[tuple[str, int, int]]
    labels: list[int]

    @property
    def half(self) -> str:
        return half_of(self.key)

    @property
    def fold(self) -> int:
        return hashlib.sha256(f"fold/{self.key[0]}/{self.key[1]}".encode()).digest()[0] % 2

    def scores(self, weights: np.ndarray) -> dict[str, float]:
        score = self.rows @ weights
        top = sorted(range(len(self.order)), key=lambda i: -score[i])[:KEEP]
        hits = [self.hits[i] for i in top]
        return score_query(self.query, hits, self.doc_of, turn_level=self.turn_level)

    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """(better, worse) candidate indices: each labelled one against each unlabelled one of
        the shipped replay's first NEGATIVE_DEPTH, and 2 against 1."""
        top = set(ranked(self.order, self.rows, BASE_WEIGHTS)[:NEGATIVE_DEPTH])
        better, worse = [], []
        for i, li in enumerate(self.labels):
            for j, lj in enumerate(self.labels):
                if li > lj and (lj > 0 or self.order[j] in top):
                    better.append(i)
                    worse.append(j)
        return np.array(better, dtype=np.int64), np.array(worse, dtype=np.int64)


def _labels(q: Any, hits: list[tuple[str, int, int]], doc_of: dict[str, str]) -> list[int]:
    out = []
    for path, start, end in hits:
        label = 1 if doc_of.get(path) in q.gold_docs else 0
        if label and any(p == path and start <= ln <= end for p, ln in q.gold_lines):
            label = 2
        out.append(label)
    return out


def prepared(name: str) -> list[Question]:
    """Every recorded question of one set (both halves), its legs reduced to feature rows."""
    dataset = registry.load(name, None, registry.DEFAULT_DATA_ROOT)
    vec_legs, kw_legs = by_question(name, "json", "vector"), by_question(name, "json", "keyword")
    pieces = by_question(name, "pieces.json", "maxsim") if name in NOTE_SETS else None
    out: list[Question] = []
    for unit in dataset.units():
        doc_of = unit.doc_of_path()
        for q in unit.queries:
            key = (unit.unit_id, q.qid)
            if key not in vec_legs or (pieces is not None and key not in pieces):
                continue
            vec = [tuple(e) for e in vec_legs[key]]
            kw = [tuple(e) for e in kw_legs[key]]
            where = {e[4]: (e[0], e[1], e[2]) for e in [*vec, *kw]}
            order, rows = candidate_features(vec, kw, POOL, pieces[key] if pieces else None)
            hits = [where[c] for c in order]
            labels = _labels(q, hits, doc_of)
            out.append(
                Question(name, key, q, doc_of, dataset.turn_level, order, rows, hits, labels)
            )
    return out


def fit(train: Sequence[Question], lam: float, steps: int = 300) -> np.ndarray:
    """Pairwise logistic loss (each set weighted equally, each question equally within its set)
    plus lam·|w − shipped|², by gradient descent with a backtracking step."""
    diffs, sets = [], []
    for q in train:
        better, worse = q.pairs()
        if len(better):
            diffs.append(q.rows[better] - q.rows[worse])
            sets.append(q.set_name)
    per_set: dict[str, int] = defaultdict(int)
    for s in sets:
        per_set[s] += 1
    qweight = [1.0 / (per_set[s] * len(per_set)) for s in sets]

    def loss_grad(w: np.ndarray) -> tuple[float, np.ndarray]:
        total, grad = 0.0, np.zeros_like(w)
        for d, qw in zip(diffs, qweight, strict=True):
            m = d @ w
            total += qw * float(np.mean(np.logaddexp(0.0, -m)))
            sig = 1.0 / (1.0 + np.exp(np.clip(m, -50, 50)))  # d loss / d m = −sigmoid(−m)
            grad -= qw * (d * sig[:, None]).mean(axis=0)
        delta = w - BASE_WEIGHTS
        return total + lam * float(delta @ delta), grad + 2 * lam * delta

    w = BASE_WEIGHTS.copy()
    loss, grad = loss_grad(w)
    step = 1.0
    for _ in range(steps):
        moved = False
        while step > 1e-8:
            trial = w - step * grad
            t_loss, t_grad = loss_grad(trial)
            if t_loss <= loss - 0.5 * step * float(grad @ grad):
                w, loss, grad = trial, t_loss, t_grad
                step *= 1.5
                moved = True
                break
            step *= 0.5
        if not moved or float(np.abs(grad).max()) < 1e-6:
            break
    return w


def values(questions: Sequence[Question], weights: np.ndarray) -> dict[str, dict[str, list[float]]]:
    """group -> metric -> one value per question (groups: all, each category), in order."""
    out: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for q in questions:
        got = q.scores(weights)
        groups = ["all"] + ([f"cat {q.query.category}"] if q.query.category != "all" else [])
        for g in groups:
            for m in SHOW:
                if m in got:
                    out[g][m].append(got[m])
    return out


def _quality(questions: Sequence[Question], weights: np.ndarray) -> float:
    """Mean of nDCG@10 and (where the set has turns) turn recall at 5 lines."""
    vals = values(questions, weights)["all"]
    return statistics.fmean(
        statistics.fmean(vals[m]) for m in ("ndcg@10", "turn_recall@L5") if vals.get(m)
    )


def run(names: Sequence[str]) -> dict[str, Any]:
    report: dict[str, Any] = {"features": FEATURES, "sets": list(names)}
    by_set = {}
    for name in names:
        by_set[name] = prepared(name)
        print(f"{name}: {len(by_set[name])} questions prepared", flush=True)
    half_a = {n: [q for q in qs if q.half == "A"] for n, qs in by_set.items()}
    train = [q for qs in half_a.values() for q in qs]
    report["train_questions"] = {n: len(qs) for n, qs in half_a.items()}
    cv: dict[str, float] = {}
    for lam in LAMBDAS:  # the regularisation, by two folds inside half A
        gains = []
        for fold in (0, 1):
            w = fit([q for q in train if q.fold != fold], lam)
            for qs in half_a.values():
                held = [q for q in qs if q.fold == fold]
                gains.append(_quality(held, w) - _quality(held, BASE_WEIGHTS))
        cv[str(lam)] = statistics.fmean(gains)
        print(f"lambda {lam}: mean gain over sets and folds {cv[str(lam)]:+.4f}", flush=True)
    report["cv_gain"] = cv
    best = float(max(cv, key=lambda k: cv[k]))
    weights = fit(train, best)
    report["lambda"] = best
    report["weights"] = dict(zip(FEATURES, map(float, weights), strict=True))
    print("weights:", {k: round(v, 3) for k, v in report["weights"].items()}, flush=True)
    report["half_B"] = {}
    for name, qs in by_set.items():
        held = [q for q in qs if q.half == "B"]
        print(f"\n{name}, half B ({len(held)} questions): learned − shipped")
        report["half_B"][name] = paired_table(values(held, BASE_WEIGHTS), values(held, weights))
    return report


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.studies.learned_fusion")
    p.add_argument("datasets", nargs="+")
    p.add_argument("--out", default="")
    args = p.parse_args()
    report = run(args.datasets)
    out = result_path(args.out, "learned-fusion")
    out.write_text(json.dumps(report, indent=1))
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
