"""Domain: how far a hit stands above what any chunk of the index scores for the query.

A cosine alone means little: e5 puts unrelated text near 0.8, and other models use other
scales. What does mean something is the hit's cosine against the query's own background: the
cosines of the same query with a fixed sample of the index (`IndexStore.background_cosines`).
A hit's confidence is its standing there, in background standard deviations,

    confidence = (cosine − mean of the background) / spread of the background,

which has no unit and no per-model constant. The sample's highest cosines (TRIM of it, at least
one) are left out of the background: in a small index the sample is the whole index, answers
included, and a background holding the hit bounds the hit's standing (at most √(n−1) in n).
A search whose best cosine does not stand STRONG_MATCH above the background says so
(`no_strong_match`) instead of removing anything: the model reading the hits can ignore a weak
one but cannot recover a missing one. The threshold and
what it separates on the foreign query pairs: bench/RESULTS.md, "Marking, not removing".
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
# The standing the best hit needs for a strong match (bench/RESULTS.md).
STRONG_MATCH: Final = 4.0


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


def no_strong_match(best: float | None, threshold: float = STRONG_MATCH) -> bool | None:
    """Whether the best standing is below `threshold`; None when it is unknown (no vector
    leg or too small a background)."""
    if best is None:
        return None
    return best < threshold


# What the CLI and the agent tools say with a response marked `no_strong_match`.
NO_STRONG_MATCH: Final = (
    "No strong match: no hit stands out from what any part of the memory scores for this "
    "query, so the memory probably holds nothing on it; the hits are only the nearest there are."
)
