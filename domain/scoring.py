"""Domain: turning retrieval candidates into one ranked list (fusion, thresholds, decay, MMR).

Order of use in a search: `zscore_merge`, `weighted_merge` or `rrf_merge` →
`apply_temporal_decay` → `apply_min_score` → `mmr_rerank` → take the first `max_results`.
Every function is pure and returns a new list; the clock's "now" is an argument.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from memlane.domain.chunks import ChunkId
from memlane.domain.search import Candidate, ScoreExplanation
from memlane.domain.sources import Source

SECONDS_PER_DAY: Final = 86_400.0
RRF_K: Final = 60
# A keyword hit whose normalised text score reaches this is "the best keyword match"; such a hit
# gets a relaxed min-score threshold, so it is not lost just because no vector agreed with it.
TOP_KEYWORD_TEXT_SCORE: Final = 1.0
_EPSILON: Final = 1e-9


@dataclass(frozen=True, slots=True)
class Fused:
    """One chunk after fusing the vector and keyword legs.

    `vector_score` is the vector leg's score (None: not a vector hit): the cosine similarity, for
    a note chunk mixed with its best piece's cosine (`best_piece`), `text_score` the keyword
    score normalised to [0, 1] within the result set (None: not a keyword hit), `score` the fused
    score that everything downstream sorts on. `decay_factor` is the decay multiplier already
    applied to `score` (1.0 when none). `file_mtime`/`timestamp` are carried for decay.
    `keyword_evidence` is the raw bm25 evidence (−rank, ≥ 0; None: not a keyword hit): unlike
    `text_score` it does not depend on the other candidates, so a relevance floor can use it.
    """

    chunk_id: ChunkId
    source: Source
    path: str
    start_line: int
    end_line: int
    text: str
    vector_score: float | None
    text_score: float | None
    score: float
    file_mtime: float | None = None
    timestamp: float | None = None
    decay_factor: float = 1.0
    keyword_evidence: float | None = None
    time_start: float | None = None
    time_end: float | None = None
    time_boost: float = 1.0  # multiplier from the question's time words (time_boost.py)
    best_piece: float | None = None  # the best piece's cosine in vector_score (note_pieces.py)

    def explanation(self, *, mmr_rank: int | None = None) -> ScoreExplanation:
        """The `--explain` view of this item."""
        return ScoreExplanation(
            vector_score=self.vector_score,
            text_score=self.text_score,
            fused_score=self.score,
            decay_factor=self.decay_factor,
            mmr_rank=mmr_rank,
            time_boost=self.time_boost,
            best_piece=self.best_piece,
        )


# --- keyword scores ------------------------------------------------------------------------------


# Below this, 1 + x is an exact float, so x / (1 + x) is monotonic after rounding.
_EXACT_ONE_PLUS: Final = 2.0**52


def bm25_rank_to_score(rank: float) -> float:
    """Map an FTS5 `bm25()` rank (negative, lower is better) monotonically into [0, 1).

    s = x / (1 + x) with x = max(0, -rank). Continuous everywhere (the reference mapped rank 0 to
    the best score, 1.0, but rank -1e-9 to ~0): a rank of 0 or above (no evidence) gives 0, better
    ranks approach 1 (in floats, ranks below about -1e16 round to 1.0). Non-finite ranks give 0.
    """
    if not math.isfinite(rank):
        return 0.0
    x = max(0.0, -rank)
    if x >= _EXACT_ONE_PLUS:
        # 1 + x is no longer exact, and x / (1 + x) could then fall as x grows.
        return 1.0
    return x / (1.0 + x)


def _keyword_evidence(keyword: Sequence[Candidate]) -> dict[ChunkId, float]:
    """Best bm25 evidence per chunk: -rank, floored at 0 (non-finite ranks → 0)."""
    evidence: dict[ChunkId, float] = {}
    for cand in keyword:
        x = max(0.0, -cand.score) if math.isfinite(cand.score) else 0.0
        evidence[cand.chunk_id] = max(x, evidence.get(cand.chunk_id, 0.0))
    return evidence


def _keyword_text_scores(keyword: Sequence[Candidate]) -> dict[ChunkId, float]:
    """Best normalised text score per chunk: bm25_rank_to_score / the set's best (best → 1.0).

    If no hit has a positive score (all ranks ≥ 0), each is an equally good match: 1.0.
    """
    raw = {c: bm25_rank_to_score(-x) for c, x in _keyword_evidence(keyword).items()}
    best = max(raw.values(), default=0.0)
    if best <= 0.0:
        return dict.fromkeys(raw, 1.0)
    return {chunk_id: score / best for chunk_id, score in raw.items()}


def _finite(value: float) -> float:
    return value if math.isfinite(value) else 0.0


def _vector_scores(vector: Sequence[Candidate]) -> dict[ChunkId, float]:
    """Best cosine per chunk (non-finite → 0)."""
    scores: dict[ChunkId, float] = {}
    for cand in vector:
        scores[cand.chunk_id] = max(_finite(cand.score), scores.get(cand.chunk_id, -math.inf))
    return scores


def _fuse(
    vector: Sequence[Candidate],
    keyword: Sequence[Candidate],
    score_of: dict[ChunkId, float],
) -> list[Fused]:
    """Union by chunk id (vector order first, then new keyword hits); sorted by score, stable."""
    text_scores = _keyword_text_scores(keyword)
    evidence = _keyword_evidence(keyword)
    vector_scores = _vector_scores(vector)
    pieces = {c.chunk_id: c.best_piece for c in vector if c.best_piece is not None}
    base: dict[ChunkId, Candidate] = {}
    for cand in vector:
        base.setdefault(cand.chunk_id, cand)
    for cand in keyword:
        if cand.chunk_id not in base or (cand.text and not base[cand.chunk_id].text):
            base[cand.chunk_id] = cand
    fused = [
        Fused(
            chunk_id=chunk_id,
            source=cand.source,
            path=cand.path,
            start_line=cand.start_line,
            end_line=cand.end_line,
            text=cand.text,
            vector_score=vector_scores.get(chunk_id),
            text_score=text_scores.get(chunk_id),
            score=score_of[chunk_id],
            file_mtime=cand.file_mtime,
            timestamp=cand.timestamp,
            time_start=cand.time_start,
            time_end=cand.time_end,
            keyword_evidence=evidence.get(chunk_id),
            best_piece=pieces.get(chunk_id),
        )
        for chunk_id, cand in base.items()
    ]
    return sorted(fused, key=lambda item: -item.score)


def weighted_merge(
    vector: Sequence[Candidate],
    keyword: Sequence[Candidate],
    *,
    vector_weight: float,
    text_weight: float,
) -> list[Fused]:
    """Weighted fusion: score = vector_weight × cosine + text_weight × text_score.

    Vector candidates carry cosine similarity, keyword candidates the raw bm25 rank. The keyword
    leg is normalised within this result set (best keyword hit → text_score 1.0), so a strong
    keyword-only hit scores exactly `text_weight` and can pass `apply_min_score` (unnormalised,
    its text score is below 1, so it would always miss the threshold and exact matches be lost).
    A missing leg counts 0. Sorted by score descending, ties keep union order.
    """
    text_scores = _keyword_text_scores(keyword)
    vector_scores = _vector_scores(vector)
    ids = list(dict.fromkeys([c.chunk_id for c in vector] + [c.chunk_id for c in keyword]))
    score_of = {
        chunk_id: vector_weight * vector_scores.get(chunk_id, 0.0)
        + text_weight * text_scores.get(chunk_id, 0.0)
        for chunk_id in ids
    }
    return _fuse(vector, keyword, score_of)


def _ranks(ids: Iterable[ChunkId]) -> dict[ChunkId, int]:
    ranks: dict[ChunkId, int] = {}
    for chunk_id in ids:
        ranks.setdefault(chunk_id, len(ranks) + 1)
    return ranks


def rrf_merge(
    vector: Sequence[Candidate],
    keyword: Sequence[Candidate],
    *,
    k: int = RRF_K,
) -> list[Fused]:
    """Reciprocal-rank fusion: score = Σ over legs of 1 / (k + rank), rank 1-based per leg.

    Each leg is ranked by its own score (cosine descending, bm25 rank ascending; ties keep input
    order; a repeated chunk keeps its best rank). Raw RRF scores are tiny and not comparable to
    `min_score`, so they are divided by the best possible 2 / (k + 1): 1.0 means first in both
    legs, 0.5 first in one leg only. `vector_score`/`text_score` are filled as in
    `weighted_merge` for `--explain`.
    """
    by_cosine = sorted(vector, key=lambda c: -_finite(c.score))
    by_rank = sorted(keyword, key=lambda c: c.score if math.isfinite(c.score) else math.inf)
    vector_ranks = _ranks(c.chunk_id for c in by_cosine)
    keyword_ranks = _ranks(c.chunk_id for c in by_rank)
    best = 2.0 / (k + 1)
    score_of: dict[ChunkId, float] = {}
    for chunk_id in list(vector_ranks) + list(keyword_ranks):
        total = sum(1.0 / (k + r[chunk_id]) for r in (vector_ranks, keyword_ranks) if chunk_id in r)
        score_of[chunk_id] = total / best
    return _fuse(vector, keyword, score_of)


def _standardised(scores: dict[ChunkId, float]) -> tuple[dict[ChunkId, float], float]:
    """z-scores of one leg (population spread) and the floor given to chunks the leg missed.

    The floor is the leg's lowest z: a chunk the leg did not return is at best as good as the
    worst one it did. A leg whose scores are all equal (one hit, or ties) has no spread to
    standardise by: its hits get 0 and the chunks it missed -1, so "matched" still beats
    "did not match".
    """
    if not scores:
        return {}, 0.0
    values = list(scores.values())
    mean = math.fsum(values) / len(values)
    spread = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values))
    if spread <= _EPSILON:
        return dict.fromkeys(scores, 0.0), -1.0
    z = {chunk_id: (value - mean) / spread for chunk_id, value in scores.items()}
    return z, min(z.values())


def z_to_unit(z: float) -> float:
    """Map a z-score monotonically into (0, 1): 0.5 + atan(z) / π (0.5 is "average", z = 1 →
    0.75). Not Φ: the normal CDF rounds to exactly 1.0 in floats above z ≈ 8, and one outlying
    bm25 hit among 200 candidates reaches z ≈ 14, so the best hits would tie; atan keeps every
    order distinct far beyond any z a candidate pool can produce (|z| ≤ √(n − 1))."""
    return 0.5 + math.atan(z) / math.pi


def zscore_merge(
    vector: Sequence[Candidate],
    keyword: Sequence[Candidate],
    *,
    vector_weight: float,
    text_weight: float,
    keyword_exhaustive: bool = False,
) -> list[Fused]:
    """Standardised fusion: each leg's scores become z-scores within this query's candidates,
    then score = z_to_unit((w_v·z_v + w_t·z_t) / √(w_v² + w_t²)), weights normalised to sum 1.

    Why: the raw legs live on scales that differ per model and per query (e5 cosines crowd into
    0.75–0.9; bm25 ranks grow with query length), so a fixed weighted sum lets whichever leg
    happens to spread more decide. Standardising gives each leg its weight's share of the
    ranking on every query (measured in bench/RESULTS.md: it is what lifts Korean hybrid above
    keyword-only). A chunk missing from a leg takes that leg's floor (see `_standardised`).
    The final score is relative to this query's candidates (0.5 = average in both legs), not
    an absolute relevance; `weighted_merge` keeps absolute scores. Ties keep union order.

    `keyword_exhaustive` says the keyword leg returned every match (fewer than it asked for):
    a chunk it missed then has bm25 evidence 0, exactly, and is standardised with that value
    instead of taking the floor. Without it, a rare word matching one or two chunks gave them
    no edge over chunks without it (one hit: z = 0 against a floor of -1), so a semantically
    closer chunk buried the exact match.
    """
    total = vector_weight + text_weight
    w_v, w_t = (0.5, 0.5) if total <= 0 else (vector_weight / total, text_weight / total)
    z_vector, vector_floor = _standardised(_vector_scores(vector))
    ids = list(dict.fromkeys([c.chunk_id for c in vector] + [c.chunk_id for c in keyword]))
    evidence = _keyword_evidence(keyword)
    if keyword_exhaustive and evidence:
        evidence = {chunk_id: evidence.get(chunk_id, 0.0) for chunk_id in ids}
    z_keyword, keyword_floor = _standardised(evidence)
    legs = [(w_v, z_vector, vector_floor), (w_t, z_keyword, keyword_floor)]
    legs = [leg for leg in legs if leg[1]]  # an empty leg says nothing about anyone
    norm = math.sqrt(math.fsum(w * w for w, _, _ in legs)) or 1.0
    score_of = {
        chunk_id: z_to_unit(math.fsum(w * z.get(chunk_id, floor) for w, z, floor in legs) / norm)
        for chunk_id in ids
    }
    return _fuse(vector, keyword, score_of)


def apply_min_score(fused: Sequence[Fused], min_score: float, *, text_weight: float) -> list[Fused]:
    """Keep items with score ≥ min_score, plus the best keyword hits, so exact matches survive.

    An item whose normalised text_score is TOP_KEYWORD_TEXT_SCORE (1.0: the best keyword match of
    the set, or tied with it) is also kept when score ≥ min(min_score, text_weight). After
    `weighted_merge` a keyword-only top hit scores exactly text_weight, so it always survives
    unless temporal decay pushed it lower. After `rrf_merge` or `zscore_merge` (relative
    scores) pass text_weight=0.0: the best keyword hit is then always kept. Order is preserved.
    """
    relaxed = min(min_score, text_weight)
    return [
        item
        for item in fused
        if item.score >= min_score
        or (
            item.text_score is not None
            and item.text_score >= TOP_KEYWORD_TEXT_SCORE - _EPSILON
            and item.score >= relaxed - _EPSILON
        )
    ]
