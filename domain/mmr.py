"""Domain: maximal marginal relevance, so the first hits are not near-copies of each other
(token Jaccard in every script, CJK bigrams)."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from typing import Final

from memlane.domain.cjk import BASIC_CJK_LETTERS
from memlane.domain.scoring import Fused

_MMR_PIECE: Final = re.compile(f"([{BASIC_CJK_LETTERS}]+)|((?:(?![{BASIC_CJK_LETTERS}])\\w)+)")


def mmr_tokens(text: str) -> frozenset[str]:
    """Unicode-aware token set for MMR similarity.

    Lowercased words of letters, digits and `_` in any script (NFC first, so `café` stays
    whole), plus the unigrams and bigrams of every CJK run (Han, kana, Hangul), which have no
    spaces to split on.
    """
    tokens: set[str] = set()
    for cjk, word in _MMR_PIECE.findall(unicodedata.normalize("NFC", text).lower()):
        if cjk:
            tokens.update(cjk)
            tokens.update(cjk[i : i + 2] for i in range(len(cjk) - 1))
        else:
            tokens.add(word)
    return frozenset(tokens)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b|; both empty → 1 (nothing tells them apart), one empty → 0."""
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    shared = len(a & b)  # |a ∪ b| by counting: building the union set dominated MMR's time
    return shared / (len(a) + len(b) - shared)


def mmr_rerank(items: Sequence[Fused], *, lambda_: float, limit: int | None = None) -> list[Fused]:
    """Reorder for diversity with maximal marginal relevance; every item is returned.

    λ is clamped to [0, 1]. Relevance = (score − min) / (max − min) (all equal → 1). Each round
    picks the remaining item maximising λ·relevance − (1 − λ)·max Jaccard(tokens, selected);
    exact ties go to the higher original score, then the earlier input position. λ = 1 is a
    stable sort by score; fewer than two items are returned unchanged. With `limit`, only the
    first `limit` places are chosen greedily (the rest follow by score): the greedy loop is
    O(limit × n) instead of O(n²), which matters with hundreds of candidates.
    """
    lam = min(1.0, max(0.0, lambda_)) if math.isfinite(lambda_) else 1.0
    if len(items) <= 1:
        return list(items)
    if lam == 1.0:
        return sorted(items, key=lambda item: -item.score)
    low = min(item.score for item in items)
    high = max(item.score for item in items)
    span = high - low
    relevance = [1.0 if span <= 0 else (item.score - low) / span for item in items]
    tokens = [mmr_tokens(item.text) for item in items]
    max_sim = [0.0] * len(items)
    remaining = list(range(len(items)))
    order: list[int] = []
    picks = len(items) if limit is None else max(0, min(limit, len(items)))
    while remaining and len(order) < picks:
        best = max(
            remaining,
            key=lambda i: (
                lam * relevance[i] - (1.0 - lam) * max_sim[i],
                items[i].score,
                -i,
            ),
        )
        order.append(best)
        remaining.remove(best)
        for i in remaining:
            max_sim[i] = max(max_sim[i], jaccard(tokens[i], tokens[best]))
    order += sorted(remaining, key=lambda i: -items[i].score)
    return [items[i] for i in order]
