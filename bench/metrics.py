"""Retrieval metrics over ranked hits given as path + line range (eval protocol §2), and a
paired bootstrap for comparing two configurations over the same queries (§2.4).

Pure functions: a hit is `(path, start_line, end_line)` with 1-based inclusive lines; gold turns
are `(path, line)` pairs; document-level metrics work on ranked distinct ids.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass

import numpy as np

Hit = tuple[str, int, int]
GoldLine = tuple[str, int]


# ---- document / session level --------------------------------------------------------------


def distinct_ids(hits: Sequence[Hit], doc_of_path: Mapping[str, str]) -> list[str]:
    """Each hit's document id (the path when unmapped), first occurrence kept, in rank order."""
    seen: set[str] = set()
    ranked: list[str] = []
    for path, _, _ in hits:
        doc = doc_of_path.get(path, path)
        if doc not in seen:
            seen.add(doc)
            ranked.append(doc)
    return ranked


def recall_any(ranked: Sequence[str], gold: Set[str] | Mapping[str, int], k: int) -> float:
    """1 if any gold id is among the first k ranked ids."""
    return 1.0 if any(d in gold for d in ranked[:k]) else 0.0


def recall_all(ranked: Sequence[str], gold: Set[str] | Mapping[str, int], k: int) -> float:
    """1 if every gold id is among the first k ranked ids (0 for an empty gold set)."""
    if not gold:
        return 0.0
    top = set(ranked[:k])
    return 1.0 if all(d in top for d in gold) else 0.0


def recall(ranked: Sequence[str], gold: Set[str] | Mapping[str, int], k: int) -> float:
    """BEIR recall@k: |gold ∩ top-k| / |gold|."""
    if not gold:
        return 0.0
    top = set(ranked[:k])
    return sum(1 for d in gold if d in top) / len(gold)


def ndcg(ranked: Sequence[str], grades: Mapping[str, int], k: int = 10) -> float:
    """nDCG@k with gains = graded relevance, discount log2(rank + 1), ideal = gold sorted."""
    dcg = sum(grades.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal_gains = sorted((g for g in grades.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal_gains))
    return dcg / idcg if idcg > 0 else 0.0


def mrr(ranked: Sequence[str], gold: Set[str] | Mapping[str, int], k: int = 10) -> float:
    """Reciprocal rank of the first gold id within the first k, else 0."""
    for i, d in enumerate(ranked[:k], start=1):
        if d in gold:
            return 1.0 / i
    return 0.0


# ---- turn / line level ---------------------------------------------------------------------


def _covered(hit: Hit, gold: Set[GoldLine]) -> set[GoldLine]:
    path, start, end = hit
    return {g for g in gold if g[0] == path and start <= g[1] <= end}


def turn_recall(hits: Sequence[Hit], gold: Set[GoldLine], k: int) -> float:
    """|gold lines covered by the first k hits| / |gold lines|."""
    if not gold:
        return 0.0
    covered: set[GoldLine] = set()
    for hit in hits[:k]:
        covered |= _covered(hit, gold)
    return len(covered) / len(gold)


def turn_hit(hits: Sequence[Hit], gold: Set[GoldLine], k: int) -> float:
    """1 if any of the first k hits covers a gold line."""
    return 1.0 if any(_covered(hit, gold) for hit in hits[:k]) else 0.0


def cut_to_budget(hits: Sequence[Hit], budget: int) -> list[Hit]:
    """The ranked hits walked until `budget` lines in total; the last one is cut at the budget."""
    out: list[Hit] = []
    used = 0
    for path, start, end in hits:
        if used >= budget:
            break
        lines = max(0, end - start + 1)
        take = min(lines, budget - used)
        if take <= 0:
            continue
        out.append((path, start, start + take - 1))
        used += take
    return out


def turn_recall_at_budget(hits: Sequence[Hit], gold: Set[GoldLine], budget: int) -> float:
    """Turn recall of the hits that fit in a budget of `budget` lines (protocol §2.2)."""
    cut = cut_to_budget(hits, budget)
    return turn_recall(cut, gold, len(cut))


def turn_ndcg(hits: Sequence[Hit], gold: Set[GoldLine], k: int = 10) -> float:
    """Gain 1 for a hit covering a gold line no earlier hit covered; ideal = min(|gold|, k) ones."""
    if not gold:
        return 0.0
    covered: set[GoldLine] = set()
    dcg = 0.0
    for i, hit in enumerate(hits[:k]):
        new = _covered(hit, gold) - covered
        if new:
            dcg += 1.0 / math.log2(i + 2)
            covered |= new
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(len(gold), k)))
    return dcg / idcg


def mean_lines_per_hit(hits: Sequence[Hit], k: int | None = None) -> float:
    """Average `end - start + 1` over the first k hits (all when k is None); 0 with no hits."""
    chosen = hits if k is None else hits[:k]
    if not chosen:
        return 0.0
    return sum(end - start + 1 for _, start, end in chosen) / len(chosen)


# ---- uncertainty ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PairedComparison:
    """Mean of (a - b) over queries with a percentile bootstrap interval and two-sided p-value."""

    mean_diff: float
    ci_low: float
    ci_high: float
    p_value: float
    n: int
    resamples: int


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    *,
    resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> PairedComparison:
    """Resample queries with replacement; the p-value is twice the smaller tail beyond 0."""
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    if not a:
        raise ValueError("no samples")
    diffs = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    n = diffs.size
    rng = np.random.default_rng(seed)
    means = np.empty(resamples, dtype=np.float64)
    chunk = max(1, 2_000_000 // n)
    for lo in range(0, resamples, chunk):
        hi = min(resamples, lo + chunk)
        idx = rng.integers(0, n, size=(hi - lo, n))
        means[lo:hi] = diffs[idx].mean(axis=1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    below = float(np.mean(means <= 0.0))
    above = float(np.mean(means >= 0.0))
    p = min(1.0, 2.0 * min(below, above))
    return PairedComparison(
        mean_diff=float(diffs.mean()),
        ci_low=float(low),
        ci_high=float(high),
        p_value=p,
        n=n,
        resamples=resamples,
    )
