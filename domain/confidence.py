"""Domain: how far a hit stands above what any chunk of the index scores for the query.

A cosine alone means little: e5 puts unrelated text near 0.8, and other models use other
scales. What does mean something is the hit's cosine against the query's own background: the
cosines of the same query with a fixed sample of the index (`IndexStore.background_cosines`).
A hit's confidence is its standing there, in background standard deviations,

    confidence = (cosine − mean of the background) / spread of the background,

which has no unit and no per-model constant. The sample's highest cosines (TRIM of it, at least
one) are left out of the background: in a small index the sample is the whole index, answers
included, and a background holding the hit bounds the hit's standing (at most √(n−1) in n).
A search says when nothing stands out (`no_strong_match`) instead of removing anything: the
model reading the hits can ignore a weak one but cannot recover a missing one. The flag is the
top-hit gap: the best cosine less the GAP_RANK-th best, in background standard deviations,
below STRONG_GAP. A question the memory answers has a few hits ahead of the rest; one it holds
nothing about finds a plateau of look-alikes. Of the signals measured (the best hit's own
standing, with and without the √(2 ln N) a best of N chunks reaches by chance, gaps to the 2nd
and 6th, the mean of the top five, the gap over the best's own standing) none separates well:
at ≤ 5 % of real questions marked this marks 6 % of the foreign ones, so a mark is rarely wrong
but most foreign questions go unmarked (bench/RESULTS.md, "Marking instead of removing";
bench/studies/confidence_study.py).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

# Chunks in the background sample (the first ones by chunk id: the same for every query).
BACKGROUND_SAMPLE: Final = 256
# Fewer chunks than this (after the trim) say too little about a background: no confidence.
MIN_BACKGROUND: Final = 4
# The share of the sample's highest cosines left out of the background (at least one).
TRIM: Final = 0.05
# The gap (best cosine − the GAP_RANK-th best, in background spreads) of a strong match: the
# highest that marks at most 5 % of the own questions of LoCoMo (the binding set: evidence
# spread over many similar turns), XQuAD-zh and LongMemEval pooled.
STRONG_GAP: Final = 0.37
GAP_RANK: Final = 6


@dataclass(frozen=True, slots=True)
class Background:
    """The query's cosines with the sample, summarised."""

    mean: float
    spread: float
    size: int

    def standing(self, cosine: float) -> float:
        return (cosine - self.mean) / self.spread


def background_of(cosines: Sequence[float]) -> Background | None:
    """The background of a query from its sample cosines; None if the sample is too small."""
    values = sorted(c for c in cosines if math.isfinite(c))
    values = values[: len(values) - max(1, int(len(values) * TRIM))]
    if len(values) < MIN_BACKGROUND:
        return None
    spread = statistics.pstdev(values)
    # Identical vectors (a sample of duplicates) have no spread: nothing stands out of them.
    return Background(statistics.fmean(values), max(spread, 1e-6), len(values))


def top_gap(cosines: Sequence[float], background: Background | None) -> float | None:
    """The best cosine less the GAP_RANK-th best, in background spreads; None with fewer
    candidates or no background."""
    if background is None or len(cosines) < GAP_RANK:
        return None
    ranked = sorted(cosines, reverse=True)
    return (ranked[0] - ranked[GAP_RANK - 1]) / background.spread


def no_strong_match(gap: float | None, threshold: float = STRONG_GAP) -> bool | None:
    """Whether the top-hit gap is below `threshold`; None when it is unknown (no vector leg,
    too small an index)."""
    if gap is None:
        return None
    return gap < threshold


# What the CLI and the agent tools say with a response marked `no_strong_match`.
NO_STRONG_MATCH: Final = (
    "No strong match: no hit stands out from what any part of the memory scores for this "
    "query, so the memory probably holds nothing on it; the hits are only the nearest there are."
)
