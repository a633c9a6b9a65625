"""Domain: an absolute relevance floor for fused hits.

Every fusion rule scores a candidate against the other candidates of the same query, so a query
about something the memory does not hold still gets confident-looking scores (the best of a
bad pool is "above average"), and `minScore` cannot remove it. The floor looks at each hit's
raw evidence instead, which does not depend on the pool: a hit is kept only if its cosine
similarity or its bm25 evidence (−rank) clears a fixed floor. It only removes hits; the order of
the hits it keeps is the fusion's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from memlane.domain.scoring import Fused

# Cosine floors calibrated per (provider id, model): cosines of different models live on
# different scales (e5 crowds everything into 0.7-0.9), so a floor is only known for a model it
# was measured on. How these were chosen: bench/RESULTS.md, "A score that means something".
CALIBRATED_COSINE_FLOORS: Final[Mapping[tuple[str, str], float]] = {
    ("local", "multilingual-e5-small"): 0.805,
}
# bm25 evidence (−rank, summed over the matched words) that vouches for a hit on its own.
# Picked with the cosine on one half of the calibration queries. It is not scale-free: a rare
# word weighs more in a larger index, so in a large, broad index this floor admits more.
KEYWORD_EVIDENCE_FLOOR: Final = 6.0


@dataclass(frozen=True, slots=True)
class RelevanceFloor:
    """Minimum raw evidence a hit needs from at least one leg; None: that leg cannot vouch.

    `min_cosine` is in the embedding model's cosine units, so it belongs to one model;
    `min_keyword_evidence` is FTS5 bm25 evidence (−rank) of the analysed query.
    """

    min_cosine: float | None = None
    min_keyword_evidence: float | None = None

    @property
    def active(self) -> bool:
        return self.min_cosine is not None or self.min_keyword_evidence is not None

    def admits(self, item: Fused) -> bool:
        """True if either leg's raw evidence for `item` reaches its floor (always, if inactive)."""
        if not self.active:
            return True
        cosine_ok = (
            self.min_cosine is not None
            and item.vector_score is not None
            and item.vector_score >= self.min_cosine
        )
        keyword_ok = (
            self.min_keyword_evidence is not None
            and item.keyword_evidence is not None
            and item.keyword_evidence >= self.min_keyword_evidence
        )
        return cosine_ok or keyword_ok


def apply_relevance_floor(fused: Sequence[Fused], floor: RelevanceFloor) -> list[Fused]:
    """The items `floor` admits, in their order."""
    return [item for item in fused if floor.admits(item)]


def floor_for(
    configured: float | None, *, provider: str | None, model: str | None, vector_leg: bool
) -> RelevanceFloor:
    """The floor a search applies.

    Without a vector leg (keyword-only mode) there is none: the keyword floor was calibrated as
    the second of two ways a hit can qualify, not as the only one. `configured` (the cosine
    floor, `query.relevanceFloor`) wins over the calibrated one; 0, or a model nobody calibrated
    a floor for and no configured value, turns the floor off.
    """
    if not vector_leg:
        return RelevanceFloor()
    cosine = configured
    if cosine is None and provider is not None and model is not None:
        cosine = CALIBRATED_COSINE_FLOORS.get((provider, model))
    if cosine is None or cosine <= 0.0:
        return RelevanceFloor()
    return RelevanceFloor(min_cosine=cosine, min_keyword_evidence=KEYWORD_EVIDENCE_FLOOR)
