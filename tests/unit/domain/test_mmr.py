"""Unit tests: MMR re-ranking (tokens, Jaccard similarity, the re-rank and its limit)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memlane.domain.chunks import ChunkId
from memlane.domain.mmr import jaccard, mmr_rerank, mmr_tokens
from memlane.domain.scoring import (
    Fused,
)
from tests.unit.domain._scoring_support import (
    fused,
    ids,
)


class TestMmrTokens:
    def test_accented_words_stay_whole(self) -> None:
        assert mmr_tokens("Café au lait") == {"café", "au", "lait"}

    def test_cjk_text_gives_unigrams_and_bigrams(self) -> None:
        assert mmr_tokens("数据库") == {"数", "据", "库", "数据", "据库"}

    def test_words_of_other_scripts_are_tokens(self) -> None:
        assert mmr_tokens("Привет мир") == {"привет", "мир"}

    def test_underscores_and_digits_stay_in_words(self) -> None:
        assert mmr_tokens("API_KEY v2") == {"api_key", "v2"}


class TestJaccard:
    def test_the_spec_cases(self) -> None:
        assert jaccard(frozenset(), frozenset()) == 1.0
        assert jaccard(frozenset({"a"}), frozenset()) == 0.0
        assert jaccard(frozenset({"a", "b"}), frozenset({"b", "c"})) == pytest.approx(1 / 3)

    def test_near_identical_chinese_snippets_are_similar(self) -> None:
        a = mmr_tokens("我们决定把数据库迁移到新的服务器上")
        b = mmr_tokens("我们决定把数据库迁移到新服务器上")
        c = mmr_tokens("周末去公园散步看花")
        assert jaccard(a, b) > 0.7
        assert jaccard(a, c) < 0.1


class TestMmrRerank:
    def test_a_near_duplicate_is_pushed_below_a_diverse_item(self) -> None:
        items = [
            fused("a", 1.0, text="我们决定把数据库迁移到新的服务器上"),
            fused("a2", 0.95, text="我们决定把数据库迁移到新服务器上"),
            fused("b", 0.93, text="周末去公园散步看花"),
            fused("d", 0.5, text="会议记录"),
        ]
        assert ids(mmr_rerank(items, lambda_=0.7))[:3] == ["a", "b", "a2"]

    def test_a_near_duplicate_english_snippet_is_pushed_down_too(self) -> None:
        items = [
            fused("a", 1.0, text="deploy the api server to production"),
            fused("a2", 0.95, text="deploy the api server to production now"),
            fused("b", 0.93, text="buy flowers for the weekend"),
            fused("d", 0.5, text="meeting notes"),
        ]
        assert ids(mmr_rerank(items, lambda_=0.7))[:3] == ["a", "b", "a2"]

    def test_every_item_is_returned(self) -> None:
        items = [fused(str(i), 1.0 - i / 10, text=f"same words {i % 2}") for i in range(6)]
        assert sorted(ids(mmr_rerank(items, lambda_=0.5))) == sorted(ids(items))

    def test_lambda_one_is_a_stable_sort_by_score(self) -> None:
        items = [fused("a", 0.5), fused("b", 0.9), fused("c", 0.5)]
        assert ids(mmr_rerank(items, lambda_=1.0)) == ["b", "a", "c"]
        assert ids(mmr_rerank(items, lambda_=3.0)) == ["b", "a", "c"]

    def test_ties_go_to_the_higher_score_then_the_earlier_item(self) -> None:
        # All relevances equal (→ 1) and all texts identical: the order is decided by ties only.
        items = [fused("a", 0.5, text="x"), fused("b", 0.5, text="x"), fused("c", 0.5, text="x")]
        assert ids(mmr_rerank(items, lambda_=0.5)) == ["a", "b", "c"]

    def test_lambda_zero_picks_the_least_similar_next(self) -> None:
        items = [
            fused("a", 0.9, text="alpha beta"),
            fused("b", 0.8, text="alpha beta gamma"),
            fused("c", 0.1, text="delta"),
        ]
        assert ids(mmr_rerank(items, lambda_=0.0))[:2] == ["a", "c"]

    def test_one_item_or_none_is_returned_unchanged(self) -> None:
        assert mmr_rerank([], lambda_=0.7) == []
        one = [fused("a", 0.1)]
        assert mmr_rerank(one, lambda_=0.7) == one

    def test_reranking_does_not_change_scores(self) -> None:
        items = [fused("a", 0.9, text="x y"), fused("b", 0.8, text="x y")]
        reranked = mmr_rerank(items, lambda_=0.5)
        assert {i.chunk_id: i.score for i in reranked} == {i.chunk_id: i.score for i in items}
        assert replace(reranked[0]) == reranked[0]


class TestMmrLimit:
    def test_only_the_first_places_are_chosen_greedily(self) -> None:
        from memlane.domain.mmr import mmr_rerank
        from memlane.domain.scoring import Fused

        def item(i: int, text: str, score: float) -> Fused:
            return Fused(
                chunk_id=ChunkId(f"c{i}"),
                source="memory",
                path=f"p{i}.md",
                start_line=1,
                end_line=1,
                text=text,
                vector_score=None,
                text_score=None,
                score=score,
            )

        items = [
            item(0, "alpha beta", 1.0),
            item(1, "alpha beta", 0.99),
            item(2, "gamma delta", 0.9),
            item(3, "epsilon", 0.5),
        ]

        full = mmr_rerank(items, lambda_=0.5)
        limited = mmr_rerank(items, lambda_=0.5, limit=2)

        assert [i.chunk_id for i in limited[:2]] == [i.chunk_id for i in full[:2]] == ["c0", "c2"]
        assert [i.chunk_id for i in limited[2:]] == ["c1", "c3"]
