"""Domain: an absolute relevance floor for fused hits.

Every fusion rule scores a candidate against the other candidates of the same query, so a query
about something the memory does not hold still gets confident-looking scores (the best of a
bad pool is "above average"), and `minScore` cannot remove it. The floor looks at each hit's
raw evidence instead, which does not depend on the pool: a hit is kept only if its cosine
similarity or its bm25 evidence (−rank) clears a fixed floor. Opt-in, that evidence also needs
a share of the query's words in the hit, unless its cosine alone is high enough to need none.
It only removes hits; the order of the hits it keeps is the fusion's.

Why the words: in a large memory about everything (a year of assistant chat), a question from
elsewhere still finds passages at the usual cosine (e5 puts unrelated text near 0.8) and a rare
word with high bm25 weight, but the hits share few of its words. A hit that answers the query
shares some. The share is a pure function of the query and the hit's own text, so it does not
depend on the pool either. It is not the default: it also drops some answering turns of short
conversational questions, more than the recall budget allows (bench/RESULTS.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from memlane.domain.keywords import fts_document, fts_query_terms
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
# The share of the query's words (its keyword terms) a hit must contain for its cosine or bm25
# evidence to count, and the cosine that vouches alone, without words (per model, like the floor).
# Off by default: measured at 0.2 it removed 78 % of foreign hits (against 61 %) but cost LoCoMo
# 0.012 turn recall at 5 lines, over the 0.01 budget (bench/RESULTS.md). Opt in with a share.
TERM_SHARE_FLOOR: Final = 0.0
MEASURED_TERM_SHARE: Final = 0.2
CALIBRATED_SURE_COSINES: Final[Mapping[tuple[str, str], float]] = {
    ("local", "multilingual-e5-small"): 0.86,
}

# Word matching approximates the index's porter stemmer without one: a few English endings are
# dropped and long words compared on their first letters, so "restaurants" finds "restaurant".
_KEY_LETTERS: Final = 6
_ENDINGS: Final = ("ies", "ing", "ed", "es", "ly", "s")
_WORD: Final = re.compile(r"[^\W_]+")


def word_key(word: str) -> str:
    """The key two spellings of one word share (lower case, light stemming, a prefix)."""
    w = word.lower()
    for ending in _ENDINGS:
        if len(w) - len(ending) >= 3 and w.endswith(ending):
            w = w[: -len(ending)] + ("y" if ending == "ies" else "")
            break
    return w[:_KEY_LETTERS]


def query_keys(query: str) -> frozenset[str]:
    """The keys of the query's keyword terms (stop words out, as the keyword leg drops them)."""
    return frozenset(word_key(t) for t in fts_query_terms(query))


def term_share(keys: frozenset[str], text: str) -> float:
    """Share of `keys` found in `text` (indexed as the keyword leg indexes it); 1 if no keys."""
    if not keys:
        return 1.0
    found = {word_key(w) for w in _WORD.findall(fts_document(text))} & keys
    return len(found) / len(keys)


@dataclass(frozen=True, slots=True)
class RelevanceFloor:
    """Minimum raw evidence a hit needs from at least one leg; None: that leg cannot vouch.

    `min_cosine` is in the embedding model's cosine units, so it belongs to one model;
    `min_keyword_evidence` is FTS5 bm25 evidence (−rank) of the analysed query.
    """

    min_cosine: float | None = None
    min_keyword_evidence: float | None = None
    # A hit's cosine or evidence only counts if it holds this share of the query's words ...
    min_term_share: float = 0.0
    # ... unless its cosine reaches this (None: words are always needed).
    sure_cosine: float | None = None

    @property
    def active(self) -> bool:
        return self.min_cosine is not None or self.min_keyword_evidence is not None

    def admits(self, item: Fused, keys: frozenset[str] = frozenset()) -> bool:
        """True if `item` clears the floor (always, if inactive); `keys`: `query_keys(query)`."""
        if not self.active:
            return True
        if (
            self.sure_cosine is not None
            and item.vector_score is not None
            and item.vector_score >= self.sure_cosine
        ):
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
        # The words last: reading the text costs more than comparing two numbers.
        return (cosine_ok or keyword_ok) and (
            self.min_term_share <= 0.0 or term_share(keys, item.text) >= self.min_term_share
        )


def apply_relevance_floor(
    fused: Sequence[Fused], floor: RelevanceFloor, query: str = ""
) -> list[Fused]:
    """The items `floor` admits for `query`, in their order."""
    keys = query_keys(query) if floor.min_term_share > 0.0 else frozenset()
    return [item for item in fused if floor.admits(item, keys)]


def floor_for(
    configured: float | None,
    *,
    provider: str | None,
    model: str | None,
    vector_leg: bool,
    term_share: float | None = None,
) -> RelevanceFloor:
    """The floor a search applies.

    Without a vector leg (keyword-only mode) there is none: the keyword floor was calibrated as
    the second of two ways a hit can qualify, not as the only one. `configured` (the cosine
    floor, `query.relevanceFloor`) wins over the calibrated one; 0, or a model nobody calibrated
    a floor for and no configured value, turns the floor off. `term_share`
    (`query.relevanceTermShare`) wins over TERM_SHARE_FLOOR (0: no word requirement, the
    default). The cosine that needs no words is only known for a calibrated model.
    """
    if not vector_leg:
        return RelevanceFloor()
    known = (provider, model) if provider is not None and model is not None else None
    cosine = configured
    if cosine is None and known is not None:
        cosine = CALIBRATED_COSINE_FLOORS.get(known)
    if cosine is None or cosine <= 0.0:
        return RelevanceFloor()
    share = TERM_SHARE_FLOOR if term_share is None else term_share
    return RelevanceFloor(
        min_cosine=cosine,
        min_keyword_evidence=KEYWORD_EVIDENCE_FLOOR,
        min_term_share=share,
        sure_cosine=CALIBRATED_SURE_COSINES.get(known) if known is not None and share > 0 else None,
    )
