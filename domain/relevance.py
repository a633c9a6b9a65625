"""Domain: an absolute relevance floor for fused hits (opt-in: `query.relevanceFloor`).

Off by default since session 9: on held-out LongMemEval it removed real answers (up to 0.10
recall_all@5; the word-share rule drops the paraphrases the vector leg exists for), and a
search now marks weak hits instead (domain/confidence.py). Set `query.relevanceFloor` (0.805
is the value calibrated for the bundled model) to remove them as before.

Every fusion rule scores a candidate against the other candidates of the same query, so a query
about something the memory does not hold still gets confident-looking scores (the best of a
bad pool is "above average"), and `minScore` cannot remove it. The floor looks at each hit's
raw evidence instead, which does not depend on the pool. A hit is kept if one of three paths
vouches for it:

- its cosine is sure (so high that no words are needed; known per model);
- its cosine clears the floor and the hit holds a share of the query's words (a fifth);
- the keyword leg found it and it holds more than a third of the words.

It only removes hits; the order of the hits it keeps is the fusion's.

Why the words, and why more of them for bm25: in a large memory about everything (a year of
assistant chat), a question from elsewhere still finds passages at the usual cosine (e5 puts
unrelated text near 0.8), and one rare word of the question, shared by chance, reaches a high
bm25 weight (a rare word weighs more the larger the index). What such hits lack is the rest of
the question's words. A hit that answers the question holds some of them, and a keyword hit
that answers it holds several. The share is a pure function of the query and the hit's own
text, so it does not depend on the pool either. Measured on seven foreign query sets and the
real queries of LoCoMo, LongMemEval and XQuAD-zh: bench/RESULTS.md, "A score that means
something".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from memlane.domain.keywords import fts_document, fts_query_terms
from memlane.domain.scoring import Fused

# Cosine floors calibrated per (provider id, model): cosines of different models live on
# different scales (e5 crowds everything into 0.7-0.9), so a floor is only known for a model it
# was measured on. How these were chosen: bench/RESULTS.md, "A score that means something".
CALIBRATED_COSINE_FLOORS: Final[Mapping[tuple[str, str], float]] = {
    ("local", "multilingual-e5-small"): 0.805,
}
# bm25 evidence (−rank) a keyword hit needs besides its words: none, any keyword match. bm25 is
# not scale-free (a rare word weighs more in a larger index, and one rare word shared by chance
# cleared the floor of 6 used before), while the share of the query's words is; measured with
# floors of 0 to 6, the words alone removed as many foreign hits and lost less recall.
KEYWORD_EVIDENCE_FLOOR: Final = 0.0
# The share of the query's words (its keyword terms) a hit must hold for its cosine to count
# (`query.relevanceTermShare`), and for its bm25 evidence (`query.relevanceKeywordTermShare`):
# one word in five, and more than one in three (2 of 3, 2 of 4, 2 of 5, 3 of 6 ...).
COSINE_TERM_SHARE: Final = 0.2
KEYWORD_TERM_SHARE: Final = 0.34
# The cosine that vouches alone, without words (per model, like the floor).
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
    """Share of `keys` found in `text` (indexed as the keyword leg indexes it); 1 if no keys.

    A word of the text has a query word's key only if it starts with that key (the stemming
    only drops endings), or with the key less its "y" when "-ies" became "-y". So each key is
    looked for as a substring first, and only the words of the text that start with it are
    keyed: a search reads up to a few hundred candidate texts, and keying every word of each
    was most of its time.
    """
    if not keys:
        return 1.0
    document = text if text.isascii() else fts_document(text)  # ASCII is indexed as it is
    lowered = document.lower()
    found = 0
    for key in keys:
        probe = key[:-1] if len(key) > 1 and key.endswith("y") else key
        if probe in lowered and any(
            word_key(w) == key for w in _words_starting(probe).findall(document)
        ):
            found += 1
    return found / len(keys)


@lru_cache(maxsize=1024)
def _words_starting(probe: str) -> re.Pattern[str]:
    """The words (as `_WORD` splits them) that start with `probe`, in any letter case."""
    return re.compile(rf"(?<![^\W_]){re.escape(probe)}[^\W_]*", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class RelevanceFloor:
    """Minimum raw evidence a hit needs from at least one leg; None: that leg cannot vouch.

    `min_cosine` is in the embedding model's cosine units, so it belongs to one model;
    `min_keyword_evidence` is FTS5 bm25 evidence (−rank) of the analysed query. Each leg's
    evidence only counts if the hit also holds its share of the query's words
    (`cosine_term_share`, `keyword_term_share`), unless its cosine reaches `sure_cosine`.
    """

    min_cosine: float | None = None
    min_keyword_evidence: float | None = None
    cosine_term_share: float = 0.0
    keyword_term_share: float = 0.0
    sure_cosine: float | None = None  # None: a cosine always needs its words

    @property
    def active(self) -> bool:
        return self.min_cosine is not None or self.min_keyword_evidence is not None

    @property
    def reads_words(self) -> bool:
        return self.active and (self.cosine_term_share > 0.0 or self.keyword_term_share > 0.0)

    def admits(self, item: Fused, keys: frozenset[str] = frozenset()) -> bool:
        """True if `item` clears the floor (always, if inactive); `keys`: `query_keys(query)`."""
        if not self.active:
            return True
        cosine = item.vector_score
        if self.sure_cosine is not None and cosine is not None and cosine >= self.sure_cosine:
            return True
        # The share needed by each leg that clears its floor (None: that leg does not).
        needs: list[float] = []
        if self.min_cosine is not None and cosine is not None and cosine >= self.min_cosine:
            needs.append(self.cosine_term_share)
        evidence = item.keyword_evidence
        if (
            self.min_keyword_evidence is not None
            and evidence is not None
            and evidence >= self.min_keyword_evidence
        ):
            needs.append(self.keyword_term_share)
        if not needs:
            return False
        easiest = min(needs)
        # The words last: reading the text costs more than comparing numbers.
        return easiest <= 0.0 or term_share(keys, item.text) >= easiest


def apply_relevance_floor(
    fused: Sequence[Fused], floor: RelevanceFloor, query: str = "", *, limit: int | None = None
) -> list[Fused]:
    """The items `floor` admits for `query`, in their order; only the first `limit` of them
    if given (the rest are not judged: reading their texts is the floor's cost)."""
    keys = query_keys(query) if floor.reads_words else frozenset()
    kept: list[Fused] = []
    for item in fused:
        if limit is not None and len(kept) >= limit:
            break
        if floor.admits(item, keys):
            kept.append(item)
    return kept


def floor_for(
    configured: float | None,
    *,
    provider: str | None,
    model: str | None,
    vector_leg: bool,
    term_share: float | None = None,
    keyword_term_share: float | None = None,
) -> RelevanceFloor:
    """The floor a search applies.

    Without a vector leg (keyword-only mode) there is none: the keyword path was calibrated as
    the second of two ways a hit can qualify, not as the only one. Only a configured cosine
    floor (`query.relevanceFloor` > 0) turns it on: unset or 0 is off, for every model
    (CALIBRATED_COSINE_FLOORS says which value suits the bundled model). `term_share`
    (`query.relevanceTermShare`) and `keyword_term_share` (`query.relevanceKeywordTermShare`)
    win over COSINE_TERM_SHARE and KEYWORD_TERM_SHARE (0: that leg needs no words). The cosine
    that needs no words is only known for a calibrated model.
    """
    if not vector_leg:
        return RelevanceFloor()
    known = (provider, model) if provider is not None and model is not None else None
    cosine = configured
    if cosine is None or cosine <= 0.0:
        return RelevanceFloor()
    return RelevanceFloor(
        min_cosine=cosine,
        min_keyword_evidence=KEYWORD_EVIDENCE_FLOOR,
        cosine_term_share=COSINE_TERM_SHARE if term_share is None else term_share,
        keyword_term_share=KEYWORD_TERM_SHARE if keyword_term_share is None else keyword_term_share,
        sure_cosine=CALIBRATED_SURE_COSINES.get(known) if known is not None else None,
    )
