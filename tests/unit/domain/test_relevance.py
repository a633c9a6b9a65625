"""The relevance floor: raw per-leg evidence decides, the fusion's order is kept."""

from __future__ import annotations

import re

import pytest

from memlane.domain.chunks import ChunkId
from memlane.domain.keywords import fts_document
from memlane.domain.relevance import (
    CALIBRATED_COSINE_FLOORS,
    CALIBRATED_SURE_COSINES,
    COSINE_TERM_SHARE,
    KEYWORD_EVIDENCE_FLOOR,
    KEYWORD_TERM_SHARE,
    RelevanceFloor,
    apply_relevance_floor,
    floor_for,
    query_keys,
    term_share,
    word_key,
)
from memlane.domain.scoring import Fused, zscore_merge
from memlane.domain.search import Candidate

FLOOR = RelevanceFloor(min_cosine=0.8, min_keyword_evidence=7.0)
BUNDLED = ("local", "multilingual-e5-small")


def item(
    chunk_id: str,
    *,
    cosine: float | None,
    evidence: float | None,
    score: float,
    text: str | None = None,
) -> Fused:
    return Fused(
        chunk_id=ChunkId(chunk_id),
        source="memory",
        path=f"{chunk_id}.md",
        start_line=1,
        end_line=1,
        text=chunk_id if text is None else text,
        vector_score=cosine,
        text_score=None if evidence is None else 1.0,
        score=score,
        keyword_evidence=evidence,
    )


def cand(chunk_id: str, score: float) -> Candidate:
    return Candidate(ChunkId(chunk_id), "memory", f"{chunk_id}.md", 1, 1, chunk_id, score)


class TestAdmits:
    @pytest.mark.parametrize(
        ("cosine", "evidence", "kept"),
        [
            (0.80, None, True),  # the cosine floor is inclusive
            (0.79, None, False),
            (None, 7.0, True),  # a keyword-only hit can vouch for itself
            (None, 6.9, False),
            (0.50, 9.0, True),  # either leg suffices
            (0.79, 6.9, False),
            (None, None, False),
        ],
    )
    def test_a_hit_needs_one_leg_at_its_floor(
        self, cosine: float | None, evidence: float | None, kept: bool
    ) -> None:
        assert FLOOR.admits(item("a", cosine=cosine, evidence=evidence, score=0.9)) is kept

    def test_an_inactive_floor_keeps_everything(self) -> None:
        assert RelevanceFloor().admits(item("a", cosine=None, evidence=None, score=0.1))

    def test_a_leg_without_a_floor_cannot_vouch(self) -> None:
        cosine_only = RelevanceFloor(min_cosine=0.8)

        assert not cosine_only.admits(item("a", cosine=0.5, evidence=1e9, score=0.9))

    def test_filtering_keeps_the_fused_order(self) -> None:
        items = [
            item("a", cosine=0.90, evidence=None, score=0.9),
            item("b", cosine=0.10, evidence=1.0, score=0.8),
            item("c", cosine=None, evidence=12.0, score=0.7),
            item("d", cosine=0.85, evidence=2.0, score=0.6),
        ]

        kept = apply_relevance_floor(items, FLOOR)

        assert [i.chunk_id for i in kept] == ["a", "c", "d"]


# The shipped shape: a fifth of the words for a cosine, more than a third for bm25 evidence.
WORDY = RelevanceFloor(
    min_cosine=0.8,
    min_keyword_evidence=7.0,
    cosine_term_share=0.2,
    keyword_term_share=0.34,
    sure_cosine=0.9,
)
QUERY = "Which Korean restaurants did Caroline try?"  # keys: korean, restaur, caroline, try


class TestTermShare:
    def test_spellings_of_one_word_share_a_key(self) -> None:
        assert word_key("Restaurants") == word_key("restaurant")
        assert word_key("studies") == word_key("study")
        assert word_key("walked") == word_key("walking") == word_key("walks")
        assert word_key("cat") != word_key("category")

    def test_the_share_counts_the_query_words_the_text_holds(self) -> None:
        keys = query_keys(QUERY)

        assert len(keys) == 4  # "which" and "did" are stop words
        assert term_share(keys, "Caroline loves the Korean restaurant downtown.") == 0.75
        assert term_share(keys, "Nothing in common here.") == 0.0

    def test_cjk_text_is_matched_on_the_index_bigrams(self) -> None:
        keys = query_keys("北京大学在哪里")

        assert 0.0 < term_share(keys, "他在北京大学读书") < 1.0

    @pytest.mark.parametrize(
        ("query", "text"),
        [
            ("studies of cities", "She STUDIED the City; a study of two cities."),
            ("restaurants Caroline", "CAROLINE's restaurant-hopping: restaurateurs"),
            ("go tries", "goes trying tried — Go!"),
            ("北京大学在哪里", "他在北京大学读书，北京很大"),
            ("서울에서 물을", "저는 서울에서 일하고 물을 마셔요"),
            ("ΣΑΣ café", "σας CAFÉ cafe\u0301s"),
        ],
    )
    def test_the_share_is_the_keyed_words_of_the_indexed_text(self, query: str, text: str) -> None:
        """The substring shortcut must find exactly what keying every word would."""
        keys = query_keys(query)
        every_word = {word_key(w) for w in re.findall(r"[^\W_]+", fts_document(text))}

        assert term_share(keys, text) == len(every_word & keys) / len(keys)

    def test_a_query_without_words_cannot_be_judged_by_words(self) -> None:
        assert term_share(frozenset(), "anything") == 1.0


class TestWordRequirement:
    @pytest.mark.parametrize(
        ("cosine", "evidence", "text", "kept"),
        [
            (0.85, None, "Caroline tried a Korean place", True),  # cosine + 3 of 4 words
            (0.85, None, "a lovely day with Caroline", True),  # cosine + 1 of 4 (a fifth)
            (0.85, None, "a lovely afternoon at the beach", False),  # cosine, no words
            (None, 9.0, "Korean restaurants everywhere", True),  # evidence + 2 of 4 words
            (None, 9.0, "Korean food", False),  # evidence, 1 of 4: a chance rare word
            (0.85, 9.0, "Korean food", True),  # ... but 1 of 4 is enough for the cosine
            (0.92, None, "a lovely afternoon at the beach", True),  # a sure cosine needs none
            (0.70, 1.0, "Caroline tried Korean restaurants", False),  # words alone never do
        ],
    )
    def test_each_leg_counts_only_with_its_share_of_the_words(
        self, cosine: float | None, evidence: float | None, text: str, kept: bool
    ) -> None:
        hit = item("a", cosine=cosine, evidence=evidence, score=0.5, text=text)

        assert WORDY.admits(hit, query_keys(QUERY)) is kept

    def test_a_leg_whose_share_is_zero_needs_no_words(self) -> None:
        hit = item("a", cosine=None, evidence=9.0, score=0.5, text="Korean food")
        loose = RelevanceFloor(0.8, 7.0, cosine_term_share=0.2, keyword_term_share=0.0)

        assert loose.admits(hit, query_keys(QUERY))
        assert not WORDY.admits(hit, query_keys(QUERY))

    def test_filtering_reads_the_query_and_keeps_the_order(self) -> None:
        items = [
            item("a", cosine=0.85, evidence=None, score=0.9, text="beach day"),
            item("b", cosine=0.85, evidence=None, score=0.8, text="Caroline, Korean restaurant"),
            item("c", cosine=0.95, evidence=None, score=0.7, text="beach day"),
            item("d", cosine=None, evidence=8.0, score=0.6, text="Korean restaurants we tried"),
        ]

        kept = apply_relevance_floor(items, WORDY, QUERY)

        assert [i.chunk_id for i in kept] == ["b", "c", "d"]
        assert [i.score for i in kept] == [0.8, 0.7, 0.6]


class TestLimit:
    def test_a_limit_gives_the_first_admitted_hits(self) -> None:
        items = [
            item(str(n), cosine=0.85, evidence=None, score=1 - n / 100, text=text)
            for n, text in enumerate(["beach", "Caroline", "beach", "Korean", "try", "beach"])
        ]

        everything = apply_relevance_floor(items, WORDY, QUERY)

        assert [i.chunk_id for i in everything] == ["1", "3", "4"]
        for limit in range(5):
            assert apply_relevance_floor(items, WORDY, QUERY, limit=limit) == everything[:limit]


class TestKeywordEvidence:
    def test_fusion_carries_the_raw_evidence_whatever_the_pool(self) -> None:
        # The normalised text_score changes with the pool; the floor's evidence must not.
        alone = zscore_merge([], [cand("a", -5.0)], vector_weight=0.5, text_weight=0.5)
        crowded = zscore_merge(
            [cand("v", 0.9)],
            [cand("a", -5.0), cand("b", -40.0)],
            vector_weight=0.5,
            text_weight=0.5,
        )

        by_id = {str(i.chunk_id): i for i in crowded}
        assert alone[0].keyword_evidence == by_id["a"].keyword_evidence == 5.0
        assert by_id["v"].keyword_evidence is None
        assert alone[0].text_score != by_id["a"].text_score


class TestFloorFor:
    def test_unset_is_off_even_for_the_bundled_model(self) -> None:
        # Session 9: the floor cost held-out recall, so it is opt-in (bench/RESULTS.md).
        assert not floor_for(None, provider=BUNDLED[0], model=BUNDLED[1], vector_leg=True).active

    def test_the_bundled_model_opted_in_gets_its_words_and_sure_cosine(self) -> None:
        floor = floor_for(
            CALIBRATED_COSINE_FLOORS[BUNDLED],
            provider=BUNDLED[0],
            model=BUNDLED[1],
            vector_leg=True,
        )

        assert floor == RelevanceFloor(
            CALIBRATED_COSINE_FLOORS[BUNDLED],
            KEYWORD_EVIDENCE_FLOOR,
            COSINE_TERM_SHARE,
            KEYWORD_TERM_SHARE,
            CALIBRATED_SURE_COSINES[BUNDLED],
        )
        assert floor.active and floor.reads_words
        assert 0.0 < COSINE_TERM_SHARE < KEYWORD_TERM_SHARE  # bm25 needs more of the words

    def test_configured_shares_win_and_zero_drops_the_words(self) -> None:
        floor = floor_for(
            0.8,
            provider=BUNDLED[0],
            model=BUNDLED[1],
            vector_leg=True,
            term_share=0.0,
            keyword_term_share=0.0,
        )

        assert (floor.cosine_term_share, floor.keyword_term_share) == (0.0, 0.0)
        assert floor.active and not floor.reads_words

    def test_a_model_nobody_calibrated_has_no_floor(self) -> None:
        floor = floor_for(None, provider="openai", model="text-embedding-3-small", vector_leg=True)

        assert not floor.active

    def test_a_configured_floor_wins_for_any_model_without_a_sure_cosine(self) -> None:
        floor = floor_for(0.4, provider="openai", model="text-embedding-3-small", vector_leg=True)

        assert floor == RelevanceFloor(
            0.4, KEYWORD_EVIDENCE_FLOOR, COSINE_TERM_SHARE, KEYWORD_TERM_SHARE, None
        )

    def test_zero_turns_it_off(self) -> None:
        assert not floor_for(0.0, provider=BUNDLED[0], model=BUNDLED[1], vector_leg=True).active

    def test_without_cosines_there_is_no_floor(self) -> None:
        assert not floor_for(0.8, provider=BUNDLED[0], model=BUNDLED[1], vector_leg=False).active
