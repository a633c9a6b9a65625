"""Signals of bench/studies/agreement_study.py: each maps one recorded query (both legs' 200
candidates and the query's background) to a number, higher = a stronger match; the study flags
a query when its value is below a threshold.

None reads the share of the query's words or an absolute cosine: cosines are read against the
query's background (domain/confidence.py) or its own candidates, bm25 evidence against the
query's own keyword candidates, and the agreement signals read only which chunks each leg put
where.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

ABSENT = 1_000  # the rank given to a chunk a leg did not return (its pool holds 200)


@dataclass(frozen=True, slots=True)
class Record:
    half: str
    keyword: list[tuple[str, float]]  # (chunk id, FTS5 rank: lower is better)
    vector: list[tuple[str, float]]  # (chunk id, cosine)
    background: tuple[float, float, int] | None  # (mean, spread, size)
    limit: int
    kw_rank: dict[str, int] = field(default_factory=dict)
    vec_rank: dict[str, int] = field(default_factory=dict)
    # A real question's default search (6 hits) has a gold document in its first 5 (recorded
    # since session 22); None for a foreign question or an older record.
    answered: bool | None = None

    @classmethod
    def of(cls, raw: dict[str, Any], half: str) -> Record:
        bg = raw["background"]
        keyword = [(str(c), float(s)) for c, s in raw["keyword"]]
        vector = [(str(c), float(s)) for c, s in raw["vector"]]
        return cls(
            half,
            keyword,
            vector,
            None if bg is None else (bg[0], bg[1], bg[2]),
            raw["limit"],
            _ranks(keyword),
            _ranks(vector),
            raw.get("answered"),
        )

    @property
    def evidence(self) -> list[float]:
        """bm25 evidence of the keyword candidates, best first (as domain/scoring.py reads it)."""
        return [max(0.0, -s) if math.isfinite(s) else 0.0 for _, s in self.keyword]

    @property
    def exhaustive(self) -> bool:
        return len(self.keyword) < self.limit


def _ranks(rows: Sequence[tuple[str, float]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for i, (cid, _) in enumerate(rows, start=1):
        out.setdefault(cid, i)
    return out


# --- the vector leg alone (the shipped flag and the best of confidence_study) -----------------


def gap_1_6(r: Record) -> float:
    if r.background is None or len(r.vector) < 6:
        return math.inf
    return (r.vector[0][1] - r.vector[5][1]) / r.background[1]


def z_best(r: Record) -> float:
    if r.background is None or not r.vector:
        return math.inf
    return (r.vector[0][1] - r.background[0]) / r.background[1]


# --- agreement of the two legs ---------------------------------------------------------------


def overlap(k: int) -> Callable[[Record], float]:
    def signal(r: Record) -> float:
        top_v = {c for c, _ in r.vector[:k]}
        top_k = {c for c, _ in r.keyword[:k]}
        return len(top_v & top_k) / k

    return signal


def rbo(p: float, depth: int) -> Callable[[Record], float]:
    """Rank-biased overlap (truncated at `depth`): the weighted mean of the top-d overlaps."""

    def signal(r: Record) -> float:
        seen_v: set[str] = set()
        seen_k: set[str] = set()
        common = 0
        total = 0.0
        for d in range(1, depth + 1):
            v = r.vector[d - 1][0] if d <= len(r.vector) else None
            k = r.keyword[d - 1][0] if d <= len(r.keyword) else None
            if v is not None:
                common += v in seen_k
                seen_v.add(v)
            if k is not None:
                common += k in seen_v
                seen_k.add(k)
            if v is not None and v == k:
                common -= 1  # counted twice above
            total += p ** (d - 1) * common / d
        return (1 - p) * total

    return signal


def best_rank_in_keyword(top: int) -> Callable[[Record], float]:
    """Minus the best keyword rank of the vector leg's first `top` chunks."""

    def signal(r: Record) -> float:
        return -min(r.kw_rank.get(c, ABSENT) for c, _ in r.vector[:top]) if r.vector else -ABSENT

    return signal


def best_rank_in_vector(top: int) -> Callable[[Record], float]:
    """Minus the best vector rank of the keyword leg's first `top` chunks."""

    def signal(r: Record) -> float:
        return -min(r.vec_rank.get(c, ABSENT) for c, _ in r.keyword[:top]) if r.keyword else -ABSENT

    return signal


def evidence_share(top: int) -> Callable[[Record], float]:
    """The best bm25 evidence among the vector leg's first `top` chunks over the keyword leg's
    best (no unit). A chunk the keyword leg did not return has evidence 0 when the leg returned
    every match, else at most its last candidate's: that bound is taken (a large index fills
    the 200 candidates, and a rank there says less than in a small one)."""

    def signal(r: Record) -> float:
        ev = r.evidence
        if not ev or ev[0] <= 0 or not r.vector:
            return 0.0
        missing = 0.0 if r.exhaustive else ev[-1]
        by_id = {c: e for (c, _), e in zip(r.keyword, ev, strict=True)}
        return max(by_id.get(c, missing) for c, _ in r.vector[:top]) / ev[0]

    return signal


def rank_sum_best(r: Record) -> float:
    """Minus the smallest vector rank + keyword rank of any chunk (the chunk both agree on)."""
    both = [r.vec_rank[c] + k for c, k in r.kw_rank.items() if c in r.vec_rank]
    return -min(both) if both else -2 * ABSENT


# --- the keyword leg's own evidence, standardised within the query's candidates ----------------


def _kw_z(r: Record) -> tuple[list[float], float, float]:
    """Evidence, mean and spread over the fused pool as zscore_merge reads it: a chunk only the
    vector leg returned has evidence 0 when the keyword leg returned every match."""
    ev = r.evidence
    if r.exhaustive and ev:
        extra = len({c for c, _ in r.vector} - set(r.kw_rank))
        ev = ev + [0.0] * extra
    if len(ev) < 2:
        return ev, 0.0, 0.0
    return ev, statistics.fmean(ev), statistics.pstdev(ev)


def kw_best_z(r: Record) -> float:
    ev, mean, spread = _kw_z(r)
    return (ev[0] - mean) / spread if ev and spread > 1e-9 else -5.0


def kw_best_z_own(r: Record) -> float:
    """The best bm25 evidence's z within the keyword candidates alone."""
    ev = r.evidence
    if len(ev) < 2:
        return -5.0
    spread = statistics.pstdev(ev)
    return (ev[0] - statistics.fmean(ev)) / spread if spread > 1e-9 else -5.0


def kw_gap_1_6(r: Record) -> float:
    ev, _, spread = _kw_z(r)
    if len(ev) < 6 or spread <= 1e-9:
        return -5.0
    return (ev[0] - ev[5]) / spread


def kw_ratio_1_2(r: Record) -> float:
    """The best evidence over the 2nd's (no unit)."""
    ev = r.evidence
    if len(ev) < 2:
        return 0.0 if not ev else 1.0
    return math.log((ev[0] + 1e-9) / (ev[1] + 1e-9))


# --- the fused first hit's standing in each leg -------------------------------------------------


def _vec_z(r: Record) -> dict[str, float]:
    cos = [s for _, s in r.vector]
    if len(cos) < 2:
        return {}
    mean, spread = statistics.fmean(cos), statistics.pstdev(cos)
    return {c: (s - mean) / max(spread, 1e-9) for c, s in r.vector}


def fused_top(r: Record) -> tuple[float, float, float]:
    """(vector z, keyword z, background standing) of the fused first hit (zscore 0.5/0.5)."""
    vz = _vec_z(r)
    ev, mean, spread = _kw_z(r)
    kz = (
        {c: (e - mean) / spread for (c, _), e in zip(r.keyword, ev, strict=False)} if spread else {}
    )
    v_floor = min(vz.values(), default=0.0)
    k_floor = (0.0 - mean) / spread if (spread and r.exhaustive) else min(kz.values(), default=-1.0)
    ids = set(vz) | set(kz)
    if not ids:
        return -5.0, -5.0, -5.0
    best = max(ids, key=lambda c: vz.get(c, v_floor) + kz.get(c, k_floor))
    standing = -5.0
    if r.background is not None and best in r.vec_rank:
        standing = (r.vector[r.vec_rank[best] - 1][1] - r.background[0]) / r.background[1]
    return vz.get(best, v_floor), kz.get(best, k_floor), standing


def fused_top_min_z(r: Record) -> float:
    v, k, _ = fused_top(r)
    return min(v, k)


def fused_top_sum_z(r: Record) -> float:
    v, k, _ = fused_top(r)
    return v + k


SIGNALS: dict[str, Callable[[Record], float]] = {
    "gap_1_6 (shipped)": gap_1_6,
    "z_best": z_best,
    "overlap@5": overlap(5),
    "overlap@10": overlap(10),
    "overlap@20": overlap(20),
    "overlap@50": overlap(50),
    "rbo p=0.9": rbo(0.9, 60),
    "rbo p=0.98": rbo(0.98, 200),
    "vec top1 rank in kw": best_rank_in_keyword(1),
    "vec top3 best rank in kw": best_rank_in_keyword(3),
    "vec top6 best rank in kw": best_rank_in_keyword(6),
    "vec top1 kw evidence share": evidence_share(1),
    "vec top3 kw evidence share": evidence_share(3),
    "vec top6 kw evidence share": evidence_share(6),
    "kw top1 rank in vec": best_rank_in_vector(1),
    "kw top3 best rank in vec": best_rank_in_vector(3),
    "best vec+kw rank sum": rank_sum_best,
    "kw best z (fused pool)": kw_best_z,
    "kw best z (kw only)": kw_best_z_own,
    "kw gap 1-6 z": kw_gap_1_6,
    "kw log best/2nd": kw_ratio_1_2,
    "fused top min(vz,kz)": fused_top_min_z,
    "fused top vz+kz": fused_top_sum_z,
}


# --- combinations, fitted on half A ---------------------------------------------------------

Values = dict[str, dict[str, list[float]]]  # pair -> signal -> per-query value


def _real_cdf(
    values: Values, halves: dict[str, list[str]], real: Sequence[str], name: str
) -> Callable[[float], float]:
    """A signal's percentile among the real half-A questions (each real set weighing equally)."""
    sets = [
        np.sort([v for v, h in zip(values[p][name], halves[p], strict=True) if h == "A"])
        for p in real
    ]

    def cdf(x: float) -> float:
        return float(np.mean([np.searchsorted(s, x, side="right") / len(s) for s in sets]))

    return cdf


COMBOS: dict[str, tuple[str, ...]] = {
    "min pct(overlap@10, gap_1_6)": ("overlap@10", "gap_1_6 (shipped)"),
    "min pct(rbo 0.9, kw best z)": ("rbo p=0.9", "kw best z (fused pool)"),
    "min pct(rank sum, gap_1_6)": ("best vec+kw rank sum", "gap_1_6 (shipped)"),
    "min pct(vec top3 in kw, kw best z)": ("vec top3 best rank in kw", "kw best z (fused pool)"),
}


def combined_signals(
    values: Values,
    halves: dict[str, list[str]],
    real: Sequence[str],
    foreign: Sequence[str],
) -> Values:
    """OR-like combinations (the lower of two real-percentiles) and a logistic score over every
    single signal, both fitted on half A only."""
    out: Values = {p: {} for p in values}
    for name, parts in COMBOS.items():
        cdfs = [_real_cdf(values, halves, real, s) for s in parts]
        for p in values:
            cols = [values[p][s] for s in parts]
            out[p][name] = [
                min(c(x) for c, x in zip(cdfs, row, strict=True)) for row in zip(*cols, strict=True)
            ]
    for label, names in LOGISTIC.items():
        w, mu, sd = _logistic(values, halves, real, foreign, names)
        for p in values:
            x = np.array([_clip(values[p][s]) for s in names]).T
            out[p][label] = list(((x - mu) / sd) @ w[1:] + w[0])
    return out


LOGISTIC: dict[str, Sequence[str]] = {
    "logistic (all signals)": list(SIGNALS),
    # One of each kind: agreement, the vector leg's gap, the keyword leg's own standing.
    "logistic (3: vec top1 kw share, gap_1_6, kw best z)": (
        "vec top1 kw evidence share",
        "gap_1_6 (shipped)",
        "kw best z (kw only)",
    ),
}


def _clip(col: Sequence[float]) -> list[float]:
    return [max(-ABSENT * 2.0, min(ABSENT * 2.0, v)) if math.isfinite(v) else 50.0 for v in col]


def _logistic(
    values: Values,
    halves: dict[str, list[str]],
    real: Sequence[str],
    foreign: Sequence[str],
    names: Sequence[str],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weights of a logistic regression (real = 1) on half A, each pair weighing equally in
    its class, by plain gradient descent on standardised features with a small L2 penalty."""
    rows, labels, weights = [], [], []
    for group, label in ((real, 1.0), (foreign, 0.0)):
        for p in group:
            idx = [i for i, h in enumerate(halves[p]) if h == "A"]
            cols = [_clip(values[p][s]) for s in names]
            for i in idx:
                rows.append([c[i] for c in cols])
                labels.append(label)
                weights.append(1.0 / (len(idx) * len(group)))
    x, y, sw = np.array(rows), np.array(labels), np.array(weights)
    mu, sd = x.mean(axis=0), x.std(axis=0) + 1e-9
    z = np.hstack([np.ones((len(x), 1)), (x - mu) / sd])
    w = np.zeros(z.shape[1])
    for _ in range(3000):
        pred = 1 / (1 + np.exp(-(z @ w)))
        grad = z.T @ (sw * (pred - y)) / sw.sum() + 1e-3 * np.r_[0, w[1:]]
        w -= 0.5 * grad
    return w, mu, sd
