"""Entry points, the key table's search section (`memorySearch.query.*`): result count,
relevance floor and term shares, the time boosts, hybrid fusion, MMR, temporal decay.

Its own module because it is long (most rows carry a measured default and its reason) and is
the section a ranking change edits.
"""

from __future__ import annotations

from typing import Final, get_args

from memlane.domain.config import CANDIDATE_POOL_LIMIT, MAX_RESULTS_LIMIT, FusionName
from memlane.entrypoints.config.key_table.row import BOOL, INT, NUM, Key

QUERY_KEYS: Final[tuple[Key, ...]] = (
    Key(
        "query.maxResults",
        INT,
        "Results per search.",
        "query.max_results",
        low=1,
        high=MAX_RESULTS_LIMIT,
    ),
    Key(
        "query.minScore",
        NUM,
        "Drop results scoring below this; 0 (default): none is dropped (the reference's 0.35 "
        "removed answers from keyword-only searches, bench/RESULTS.md, session 21).",
        "query.min_score",
        low=0,
        high=1,
    ),
    Key(
        "query.commonWordShare",
        NUM,
        "Opt-in: the vector leg embeds the question without the words more than this share of "
        "the chunks hold (a speaker's name on every line; memories of 50 chunks or more), 0.5 "
        "measured; 0 (default): the whole question (bench/RESULTS.md, common words).",
        "query.common_word_share",
        low=0,
        high=1,
    ),
    Key(
        "query.pieceWeight",
        NUM,
        "How much a note chunk's best piece (a line or a run of sentences, embedded on its own) "
        "counts beside the chunk's own cosine in the vector leg; 0: the chunk's cosine alone, "
        "and no piece is embedded (bench/RESULTS.md, session 23).",
        "query.piece_weight",
        low=0,
        high=1,
    ),
    Key(
        "query.relevanceFloor",
        NUM,
        "Opt-in: cosine a hit needs unless its keyword evidence is strong (0.805 suits the "
        "bundled model); unset or 0: off, weak hits are marked, not removed (bench/RESULTS.md).",
        "query.relevance_floor",
        low=0,
        high=1,
    ),
    Key(
        "query.relevanceTermShare",
        NUM,
        "Share of the query's words a hit needs for its cosine to count (a hit of calibrated, "
        "very high cosine needs none); unset: 0.2; 0: no words (bench/RESULTS.md).",
        "query.relevance_term_share",
        low=0,
        high=1,
    ),
    Key(
        "query.relevanceKeywordTermShare",
        NUM,
        "Share of the query's words a hit needs for its keyword (bm25) evidence to count; "
        "unset: 0.34 (more than a third); 0: no words (bench/RESULTS.md).",
        "query.relevance_keyword_term_share",
        low=0,
        high=1,
    ),
    Key(
        "query.timeBoost",
        NUM,
        'How far a hit written when the question\'s time words say ("last week", "昨天"), '
        "or mentioning that time, moves towards a score of 1; default 1 (measured best, held "
        "by timeMaxDrop); 0: time words change no ranking (bench/RESULTS.md, time-aware search).",
        "query.time_boost",
        low=0,
        high=1,
    ),
    Key(
        "query.timeOrderBoost",
        NUM,
        'The same for ordering words ("first time", "most recent", "before"): the candidates '
        "at the asked end of their times keep their score; 0 (default): no change "
        "(bench/RESULTS.md, time-aware search).",
        "query.time_order_boost",
        low=0,
        high=1,
    ),
    Key(
        "query.whenBoost",
        NUM,
        'The same for a question that asks when ("when did …", "how long ago", "什么时候", '
        '"いつ"): a hit with a line that says when ("yesterday", "last Saturday", "in 2022") '
        "beside the question's words keeps its score; 0 (default): no change "
        "(bench/RESULTS.md, time-aware search).",
        "query.when_boost",
        low=0,
        high=1,
    ),
    Key(
        "query.timeMaxDrop",
        INT,
        "The most places the time boosts above may move a hit down, so a hit ranked high on "
        "its words and meaning stays among the first; default 2 (the first three stay in the "
        "first five); null: no limit (bench/RESULTS.md, time-aware search).",
        "query.time_max_drop",
        low=0,
        high=1000,
    ),
    Key("query.hybrid.enabled", BOOL, "Fuse vector and keyword search.", "query.hybrid.enabled"),
    Key(
        "query.hybrid.vectorWeight",
        NUM,
        "Vector share of the fused score (default 0.7 for weighted and rrf).",
        "query.hybrid.vector_weight",
        low=0,
        high=1,
    ),
    Key(
        "query.hybrid.textWeight",
        NUM,
        "Keyword share of the fused score (default 0.3 for weighted and rrf).",
        "query.hybrid.text_weight",
        low=0,
        high=1,
    ),
    Key(
        "query.hybrid.candidateMultiplier",
        INT,
        "Candidates per leg = maxResults x this.",
        "query.hybrid.candidate_multiplier",
        low=1,
        high=20,
    ),
    Key(
        "query.hybrid.minCandidates",
        INT,
        "Fused searches fetch at least this many per leg.",
        "query.hybrid.min_candidates",
        low=1,
        high=CANDIDATE_POOL_LIMIT,
    ),
    Key(
        "query.hybrid.fusion",
        "choice",
        "How the two legs are fused.",
        "query.hybrid.fusion",
        choices=get_args(FusionName),
    ),
    Key(
        "query.hybrid.rrfK",
        INT,
        "The k of reciprocal-rank fusion.",
        "query.hybrid.rrf_k",
        low=1,
        high=1000,
    ),
    Key(
        "query.hybrid.mmr.enabled",
        BOOL,
        "Diversify results (maximal marginal relevance).",
        "query.hybrid.mmr.enabled",
    ),
    Key(
        "query.hybrid.mmr.lambda",
        NUM,
        "MMR trade-off: 1 is relevance only.",
        "query.hybrid.mmr.lambda_",
        low=0,
        high=1,
    ),
    Key(
        "query.hybrid.temporalDecay.enabled",
        BOOL,
        "Favour recent notes.",
        "query.hybrid.temporal_decay.enabled",
    ),
    Key(
        "query.hybrid.temporalDecay.halfLifeDays",
        INT,
        "Age at which a score halves.",
        "query.hybrid.temporal_decay.half_life_days",
        low=1,
        high=36_500,
    ),
)
