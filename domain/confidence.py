"""Domain: how far a hit stands above what any chunk of the index scores for the query.

A cosine alone means little: e5 puts unrelated text near 0.8, and other models use other
scales. What does mean something is the hit's cosine against the query's own background: the
cosines of the same query with a fixed sample of the index (`IndexStore.background_cosines`).
A hit's confidence is its standing there, in background standard deviations,

    confidence = (cosine − mean of the background) / spread of the background,

which has no unit and no per-model constant. The sample's highest cosines (TRIM of it, at least
one) are left out of the background: in a small index the sample is the whole index, answers
included, and a background holding the hit bounds the hit's standing (at most √(n−1) in n).
A search says when it found no strong match (`no_strong_match`) instead of removing anything:
the model reading the hits can ignore a weak one but cannot recover a missing one. A hybrid
search judges by its two legs' agreement (`legs_disagree`): a question the memory answers has
its nearest chunks in meaning among the best matches of its words too; a question it holds
nothing about finds near-misses in meaning that its words do not point to (or no word match at
all). Over nine foreign pairs this marks 81 % of the foreign questions and about 5 % of the
questions the search answers on the worst of seven real sets (4.4 % and 5.7 % with the rank
chosen on one half of the questions and read on the other); a real question whose answer the
search misses is marked more often, 19 % (bench/RESULTS.md, "Session 22";
bench/studies/agreement_study.py). It looks at the question's words only through the keyword
leg's ranking and removes nothing, so an answer that shares few words with its question is
kept; such a question, or one asked in another language than the memory's, may be marked. A
vector-only search has no keyword leg and judges by the top gap: the best cosine less the
GAP_RANK-th best, in background standard deviations, below STRONG_GAP (a plateau of
look-alikes), a weaker signal that marks 6 % of the foreign questions (bench/RESULTS.md,
"Marking instead of removing").
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from memlane.domain.chunks import ChunkId

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
# The legs' agreement of a strong match: one of the vector leg's AGREEMENT_TOP best chunks is
# among the keyword leg's AGREEMENT_RANK best. From 35 to 45 at most 5 % of the questions the
# default search answered are marked, on each of seven real sets (session 22: XQuAD-zh,
# LongMemEval pooled, LoCoMo, SciFact test and training claims, AutoRAG-ko, JaQuAD); 40 lies
# between the ranks chosen on each half of them (37 and 49).
AGREEMENT_TOP: Final = 3
AGREEMENT_RANK: Final = 40


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


def legs_disagree(vector: Sequence[ChunkId], keyword: Sequence[ChunkId]) -> bool | None:
    """Whether none of the vector leg's AGREEMENT_TOP best chunks is among the keyword leg's
    AGREEMENT_RANK best (both best first); None without vector candidates."""
    if not vector:
        return None
    matched = set(keyword[:AGREEMENT_RANK])
    return not any(chunk in matched for chunk in vector[:AGREEMENT_TOP])


# What the CLI and the agent tools say with a response marked `no_strong_match`.
NO_STRONG_MATCH: Final = (
    "No strong match: what the memory holds nearest in meaning is not what the query's words "
    "point to, or nothing stands out from the rest, so the memory probably holds nothing on it; "
    "the hits are only the nearest there are."
)
