"""Application: the text the vector leg embeds: the question without the words the memory
holds almost everywhere (`query.commonWordShare`; why and the rule: domain/common_words.py).

One lookup of the question's words in the keyword index's statistics (the counts bm25 already
keeps, cached per index version by both stores), before the one query embedding. Searching
across agents, the searching agent's own index says which words are common.
"""

from __future__ import annotations

from dataclasses import dataclass

from memlane.application.ports.index_store import IndexStore
from memlane.domain.common_words import candidate_words, common_words, without_words


@dataclass(frozen=True, slots=True)
class VectorQuery:
    """What the vector leg embeds, and the common words left out of it (empty: none)."""

    text: str
    left_out: tuple[str, ...] = ()


def vector_query(store: IndexStore, text: str, *, share: float) -> VectorQuery:
    """`text` without the words more than `share` of `store`'s chunks hold; `text` itself when
    no word is that common, when only stop words would remain, or when `share` is 0 (off)."""
    if share <= 0.0:
        return VectorQuery(text)
    words = candidate_words(text)
    if not words:
        return VectorQuery(text)
    total, counts = store.keyword_document_counts(words)
    common = common_words(dict(zip(words, counts, strict=True)), total, share=share)
    rest = without_words(text, common)
    if rest is None:
        return VectorQuery(text)
    return VectorQuery(rest, tuple(common))
