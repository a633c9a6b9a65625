"""Unit tests: bm25 mapping, hybrid fusion, thresholds, temporal decay and MMR."""

from __future__ import annotations

import calendar
import math
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlane.domain.chunks import ChunkId
from memlane.domain.decay import apply_temporal_decay, decay_factor, item_timestamp
from memlane.domain.mmr import jaccard, mmr_rerank, mmr_tokens
from memlane.domain.scoring import (
    Fused,
    apply_min_score,
    bm25_rank_to_score,
    rrf_merge,
    weighted_merge,
    z_to_unit,
    zscore_merge,
)
from memlane.domain.search import Candidate
from memlane.domain.sources import Source

DAY = 86_400.0
NOW = float(calendar.timegm((2026, 3, 1, 0, 0, 0)))


def cand(
    chunk_id: str,
    score: float,
    *,
    text: str = "",
    path: str = "notes.md",
    source: Source = "memory",
    file_mtime: float | None = None,
    timestamp: float | None = None,
) -> Candidate:
    return Candidate(
        chunk_id=ChunkId(chunk_id),
        source=source,
        path=path,
        start_line=1,
        end_line=2,
        text=text or f"text of {chunk_id}",
        score=score,
        file_mtime=file_mtime,
        timestamp=timestamp,
    )


def fused(
    chunk_id: str,
    score: float,
    *,
    text: str = "",
    text_score: float | None = None,
    vector_score: float | None = None,
    path: str = "notes.md",
    source: Source = "memory",
    file_mtime: float | None = None,
    timestamp: float | None = None,
) -> Fused:
    return Fused(
        chunk_id=ChunkId(chunk_id),
        source=source,
        path=path,
        start_line=1,
        end_line=2,
        text=text or f"text of {chunk_id}",
        vector_score=vector_score,
        text_score=text_score,
        score=score,
        file_mtime=file_mtime,
        timestamp=timestamp,
    )


def ids(items: list[Fused]) -> list[str]:
    return [item.chunk_id for item in items]


class TestBm25RankToScore:
    def test_a_better_negative_rank_gives_a_higher_score(self) -> None:
        assert bm25_rank_to_score(-1.0) == pytest.approx(0.5)
        assert bm25_rank_to_score(-3.0) == pytest.approx(0.75)

    def test_rank_zero_and_above_give_zero_without_a_jump(self) -> None:
        assert bm25_rank_to_score(0.0) == 0.0
        assert bm25_rank_to_score(2.0) == 0.0
        assert bm25_rank_to_score(-1e-9) == pytest.approx(0.0, abs=1e-8)

    @pytest.mark.parametrize("rank", [math.nan, math.inf, -math.inf])
    def test_non_finite_ranks_give_zero(self, rank: float) -> None:
        assert bm25_rank_to_score(rank) == 0.0

    @given(
        st.floats(allow_nan=False, allow_infinity=False),
        st.floats(allow_nan=False, allow_infinity=False),
    )
    def test_the_mapping_is_monotonic_and_inside_the_unit_interval(
        self, a: float, b: float
    ) -> None:
        low, high = sorted((a, b))
        assert 0.0 <= bm25_rank_to_score(high) <= bm25_rank_to_score(low) <= 1.0


class TestWeightedMerge:
    def test_the_spec_weighted_sum_is_used(self) -> None:
        vector = [cand("a", 0.8)]
        keyword = [cand("a", -1.0)]  # bm25 score 0.5, the best keyword hit → text score 1.0
        [item] = weighted_merge(vector, keyword, vector_weight=0.7, text_weight=0.3)
        assert item.vector_score == 0.8
        assert item.text_score == 1.0
        assert item.score == pytest.approx(0.7 * 0.8 + 0.3 * 1.0)

    def test_keyword_scores_are_normalised_to_the_best_keyword_hit(self) -> None:
        keyword = [cand("a", -3.0), cand("b", -1.0)]  # bm25 scores 0.75 and 0.5
        merged = weighted_merge([], keyword, vector_weight=0.7, text_weight=0.3)
        by_id = {item.chunk_id: item for item in merged}
        assert by_id[ChunkId("a")].text_score == pytest.approx(1.0)
        assert by_id[ChunkId("b")].text_score == pytest.approx(0.5 / 0.75)

    def test_a_keyword_only_top_hit_scores_the_text_weight(self) -> None:
        merged = weighted_merge(
            [cand("v", 0.9)], [cand("k", -2.0)], vector_weight=0.7, text_weight=0.3
        )
        by_id = {item.chunk_id: item for item in merged}
        assert by_id[ChunkId("k")].score == pytest.approx(0.3)
        assert by_id[ChunkId("k")].vector_score is None
        assert by_id[ChunkId("v")].text_score is None

    def test_results_are_the_union_sorted_by_score(self) -> None:
        vector = [cand("a", 0.2), cand("b", 0.9)]
        keyword = [cand("c", -5.0), cand("b", -1.0)]
        merged = weighted_merge(vector, keyword, vector_weight=0.7, text_weight=0.3)
        assert sorted(ids(merged)) == ["a", "b", "c"]
        assert [item.score for item in merged] == sorted(
            (item.score for item in merged), reverse=True
        )

    def test_equal_scores_keep_vector_order_then_keyword_order(self) -> None:
        vector = [cand("a", 0.5), cand("b", 0.5)]
        merged = weighted_merge(vector, [], vector_weight=1.0, text_weight=0.0)
        assert ids(merged) == ["a", "b"]

    def test_keyword_hits_with_no_bm25_evidence_count_as_full_matches(self) -> None:
        [item] = weighted_merge([], [cand("a", 0.0)], vector_weight=0.7, text_weight=0.3)
        assert item.text_score == 1.0

    def test_candidate_metadata_is_carried(self) -> None:
        vector = [cand("a", 0.5, path="sessions/x.jsonl", source="sessions", timestamp=5.0)]
        [item] = weighted_merge(vector, [], vector_weight=1.0, text_weight=0.0)
        assert (item.path, item.source, item.timestamp) == ("sessions/x.jsonl", "sessions", 5.0)

    def test_a_non_finite_cosine_counts_zero(self) -> None:
        [item] = weighted_merge([cand("a", math.nan)], [], vector_weight=1.0, text_weight=0.0)
        assert item.score == 0.0


class TestRrfMerge:
    def test_first_in_both_legs_scores_one(self) -> None:
        merged = rrf_merge([cand("a", 0.9), cand("b", 0.1)], [cand("a", -3.0)], k=60)
        assert merged[0].chunk_id == "a"
        assert merged[0].score == pytest.approx(1.0)

    def test_scores_are_reciprocal_ranks_scaled_by_the_best_possible(self) -> None:
        merged = rrf_merge([cand("a", 0.9), cand("b", 0.1)], [cand("b", -1.0)], k=60)
        by_id = {item.chunk_id: item.score for item in merged}
        best = 2 / 61
        assert by_id[ChunkId("a")] == pytest.approx((1 / 61) / best)
        assert by_id[ChunkId("b")] == pytest.approx((1 / 62 + 1 / 61) / best)

    def test_legs_are_ranked_by_their_own_scores_not_input_order(self) -> None:
        merged = rrf_merge([], [cand("weak", -0.5), cand("strong", -4.0)], k=60)
        assert ids(merged) == ["strong", "weak"]

    def test_a_keyword_only_top_hit_scores_one_half(self) -> None:
        merged = rrf_merge([cand("v", 0.9)], [cand("k", -2.0)])
        assert {item.chunk_id: item.score for item in merged}[ChunkId("k")] == pytest.approx(0.5)


class TestZscoreMerge:
    def test_scores_are_the_cdf_of_the_weighted_z_scores(self) -> None:
        # vector cosines 0.9 / 0.7 → z +1 / -1; keyword evidence 4 / 2 (ranks -4, -2) → z +1 / -1
        vector = [cand("a", 0.9), cand("b", 0.7)]
        keyword = [cand("b", -4.0), cand("a", -2.0)]
        merged = zscore_merge(vector, keyword, vector_weight=0.4, text_weight=0.6)
        by_id = {item.chunk_id: item.score for item in merged}
        norm = math.sqrt(0.4**2 + 0.6**2)
        assert by_id[ChunkId("a")] == pytest.approx(z_to_unit((0.4 - 0.6) / norm))
        assert by_id[ChunkId("b")] == pytest.approx(z_to_unit((0.6 - 0.4) / norm))
        assert ids(merged) == ["b", "a"]

    def test_the_spread_of_a_leg_does_not_decide_its_influence(self) -> None:
        # e5-style cosines crowd together; bm25 evidence spreads widely. Scaling one leg's raw
        # scores must not change the order, only the weights may.
        vector = [cand("a", 0.86), cand("b", 0.84), cand("c", 0.80)]
        narrow = [cand("c", -3.0), cand("b", -2.0), cand("a", -1.0)]
        wide = [cand("c", -300.0), cand("b", -200.0), cand("a", -100.0)]
        one = zscore_merge(vector, narrow, vector_weight=0.5, text_weight=0.5)
        other = zscore_merge(vector, wide, vector_weight=0.5, text_weight=0.5)
        assert ids(one) == ids(other)
        assert [i.score for i in one] == pytest.approx([i.score for i in other])

    def test_a_chunk_missing_from_a_leg_takes_the_legs_lowest_z(self) -> None:
        vector = [cand("a", 0.9), cand("b", 0.8), cand("c", 0.7)]
        keyword = [cand("a", -5.0), cand("b", -1.0)]
        merged = zscore_merge(vector, keyword, vector_weight=0.5, text_weight=0.5)
        by_id = {item.chunk_id: item for item in merged}
        # c is the vector leg's worst and takes the keyword leg's floor (b's z): lowest overall
        assert ids(merged)[-1] == "c"
        assert by_id[ChunkId("c")].score < by_id[ChunkId("b")].score
        assert by_id[ChunkId("c")].text_score is None

    def test_a_leg_without_spread_still_ranks_its_hits_above_the_ones_it_missed(self) -> None:
        vector = [cand("a", 0.9), cand("b", 0.9)]
        keyword = [cand("b", -2.0)]
        merged = zscore_merge(vector, keyword, vector_weight=0.5, text_weight=0.5)
        assert ids(merged) == ["b", "a"]

    def test_an_exhaustive_keyword_leg_lifts_its_only_match_over_closer_vectors(self) -> None:
        # The SIGKILL suite's case: a planted rare word in one note; the vector leg's 200
        # candidates (a default search's pool) spread 0.80-0.90, the note in the lower half.
        vector = [cand(f"t{i}", 0.80 + i / 2000) for i in range(200)] + [cand("note", 0.83)]
        keyword = [cand("note", -3.2)]
        floored = zscore_merge(vector, keyword, vector_weight=0.7, text_weight=0.3)
        exact = zscore_merge(
            vector, keyword, vector_weight=0.7, text_weight=0.3, keyword_exhaustive=True
        )
        assert ids(floored)[0] != "note"  # the match only took the leg's own z of 0
        assert ids(exact)[0] == "note"

    def test_an_exhaustive_keyword_leg_scores_missed_chunks_as_evidence_zero(self) -> None:
        # Two matches with distinct evidence: without the flag the weaker one is standardised
        # to the floor every non-matching chunk gets; with it, it stays above them.
        vector = [cand("a", 0.9), cand("b", 0.8), cand("c", 0.8)]
        keyword = [cand("a", -5.0), cand("b", -1.0)]
        merged = zscore_merge(
            vector, keyword, vector_weight=0.5, text_weight=0.5, keyword_exhaustive=True
        )
        by_id = {item.chunk_id: item.score for item in merged}
        assert by_id[ChunkId("b")] > by_id[ChunkId("c")]  # same cosine, b has the word
        floored = zscore_merge(vector, keyword, vector_weight=0.5, text_weight=0.5)
        scores = {item.chunk_id: item.score for item in floored}
        assert scores[ChunkId("b")] == pytest.approx(scores[ChunkId("c")])

    def test_an_empty_leg_leaves_the_other_legs_order(self) -> None:
        vector = [cand("a", 0.5), cand("b", 0.9), cand("c", 0.7)]
        merged = zscore_merge(vector, [], vector_weight=0.4, text_weight=0.6)
        assert ids(merged) == ["b", "c", "a"]
        assert merged[0].score == pytest.approx(z_to_unit(1.2247448713915887))

    def test_zero_weights_count_equally_and_scores_stay_inside_the_unit_interval(self) -> None:
        vector = [cand(str(i), i / 10) for i in range(10)]
        keyword = [cand(str(i), -float(10 - i)) for i in range(10)]
        merged = zscore_merge(vector, keyword, vector_weight=0.0, text_weight=0.0)
        assert all(0.0 < item.score < 1.0 for item in merged)
        # equal weights and exactly opposite orders: every chunk ties at 0.5
        assert {round(item.score, 9) for item in merged} == {0.5}

    def test_an_outlying_keyword_hit_does_not_flatten_the_order_of_the_best_hits(self) -> None:
        # One bm25 outlier among many weak matches has z ≈ √(n − 1): the fused scores of the top
        # hits must stay distinct (a normal CDF rounds them all to 1.0).
        keyword = [cand("outlier", -400.0), cand("second", -60.0)]
        keyword += [cand(f"k{i}", -1.0) for i in range(198)]
        vector = [cand("second", 0.95), cand("outlier", 0.94)]
        vector += [cand(f"k{i}", 0.5) for i in range(198)]
        merged = zscore_merge(vector, keyword, vector_weight=0.4, text_weight=0.6)
        assert ids(merged)[:2] == ["outlier", "second"]
        assert merged[0].score > merged[1].score > merged[2].score
        assert merged[0].score < 1.0

    def test_z_to_unit_is_centred_bounded_and_strictly_increasing(self) -> None:
        assert z_to_unit(0.0) == 0.5
        assert z_to_unit(1.0) == pytest.approx(0.75)
        values = [z_to_unit(z) for z in (-50.0, -3.0, 0.0, 3.0, 30.0, 31.0, 50.0)]
        assert all(0.0 < v < 1.0 for v in values)
        assert values == sorted(set(values))

    def test_non_finite_scores_count_as_no_evidence(self) -> None:
        vector = [cand("a", math.nan), cand("b", 0.5)]
        keyword = [cand("a", math.inf), cand("b", -1.0)]
        merged = zscore_merge(vector, keyword, vector_weight=0.5, text_weight=0.5)
        assert ids(merged) == ["b", "a"]
        assert all(math.isfinite(item.score) for item in merged)

    def test_the_top_keyword_only_hit_survives_min_score_with_no_relaxation_floor(self) -> None:
        vector = [cand(f"v{i}", 0.9 - i / 100) for i in range(20)]
        merged = zscore_merge(vector, [cand("exact", -9.0)], vector_weight=0.4, text_weight=0.6)
        kept = apply_min_score(merged, 0.99, text_weight=0.0)
        assert ids(kept) == ["exact"]


class TestApplyMinScore:
    def test_items_at_or_above_the_threshold_are_kept_in_order(self) -> None:
        items = [fused("a", 0.9), fused("b", 0.35), fused("c", 0.2)]
        assert ids(apply_min_score(items, 0.35, text_weight=0.3)) == ["a", "b"]

    def test_the_top_keyword_only_hit_survives_a_higher_min_score(self) -> None:
        merged = weighted_merge(
            [cand("v", 0.2)], [cand("exact", -2.0)], vector_weight=0.7, text_weight=0.3
        )
        assert "exact" in ids(apply_min_score(merged, 0.35, text_weight=0.3))

    def test_weaker_keyword_only_hits_still_need_the_min_score(self) -> None:
        items = [fused("top", 0.3, text_score=1.0), fused("weak", 0.2, text_score=0.66)]
        assert ids(apply_min_score(items, 0.35, text_weight=0.3)) == ["top"]

    def test_a_top_keyword_hit_decayed_below_the_relaxed_threshold_is_dropped(self) -> None:
        items = [fused("old", 0.15, text_score=1.0)]
        assert apply_min_score(items, 0.35, text_weight=0.3) == []

    def test_a_low_vector_only_hit_is_dropped(self) -> None:
        items = [fused("v", 0.3, vector_score=0.43)]
        assert apply_min_score(items, 0.35, text_weight=0.3) == []


class TestDecayFactor:
    def test_one_half_life_halves(self) -> None:
        assert decay_factor(30.0, 30.0) == pytest.approx(0.5)
        assert decay_factor(60.0, 30.0) == pytest.approx(0.25)

    def test_age_zero_and_future_dates_do_not_decay(self) -> None:
        assert decay_factor(0.0, 30.0) == 1.0
        assert decay_factor(-10.0, 30.0) == 1.0

    @pytest.mark.parametrize("half_life", [0.0, -1.0, math.nan, math.inf])
    def test_a_disabled_half_life_never_decays(self, half_life: float) -> None:
        assert decay_factor(100.0, half_life) == 1.0

    def test_a_non_finite_age_does_not_decay(self) -> None:
        assert decay_factor(math.nan, 30.0) == 1.0


class TestItemTimestamp:
    def test_a_dated_note_uses_its_date_at_midnight_utc(self) -> None:
        ts = item_timestamp("memory", "memory/2026-01-05.md", chunk_timestamp=None, file_mtime=1.0)
        assert ts == calendar.timegm((2026, 1, 5, 0, 0, 0))

    def test_a_dated_note_under_an_extra_path_or_with_backslashes_is_dated(self) -> None:
        expected = calendar.timegm((2025, 12, 31, 0, 0, 0))
        for path in ("../notes/memory/2025-12-31.md", ".\\memory\\2025-12-31.md"):
            assert item_timestamp("memory", path, chunk_timestamp=None, file_mtime=1.0) == expected

    @pytest.mark.parametrize(
        "path", ["MEMORY.md", "memory.md", "memory/projects.md", "memory/2026-02-30.md"]
    )
    def test_evergreen_memory_files_never_decay(self, path: str) -> None:
        assert item_timestamp("memory", path, chunk_timestamp=None, file_mtime=1.0) is None

    def test_a_session_chunk_uses_its_own_timestamp(self) -> None:
        ts = item_timestamp("sessions", "sessions/a.jsonl", chunk_timestamp=42.0, file_mtime=99.0)
        assert ts == 42.0

    def test_a_session_chunk_without_timestamp_uses_the_file_mtime(self) -> None:
        ts = item_timestamp("sessions", "sessions/a.jsonl", chunk_timestamp=None, file_mtime=99.0)
        assert ts == 99.0

    def test_other_files_use_the_file_mtime(self) -> None:
        ts = item_timestamp("memory", "../notes/x.md", chunk_timestamp=None, file_mtime=7.0)
        assert ts == 7.0


class TestApplyTemporalDecay:
    def test_older_items_lose_score_and_the_list_is_re_sorted(self) -> None:
        items = [
            fused("old", 1.0, path="memory/2026-01-30.md"),  # 30 days before NOW
            fused("new", 0.8, path="memory/2026-03-01.md"),
        ]
        decayed = apply_temporal_decay(items, now=NOW, half_life_days=30.0)
        assert ids(decayed) == ["new", "old"]
        assert decayed[1].score == pytest.approx(0.5)
        assert decayed[1].decay_factor == pytest.approx(0.5)

    def test_evergreen_items_keep_their_score(self) -> None:
        [item] = apply_temporal_decay(
            [fused("e", 0.7, path="MEMORY.md")], now=NOW, half_life_days=1
        )
        assert item.score == 0.7
        assert item.decay_factor == 1.0

    def test_session_items_decay_by_message_time(self) -> None:
        item = fused("s", 1.0, path="sessions/a.jsonl", source="sessions", timestamp=NOW - 10 * DAY)
        [decayed] = apply_temporal_decay([item], now=NOW, half_life_days=10.0)
        assert decayed.score == pytest.approx(0.5)

    def test_the_explanation_reports_the_decay(self) -> None:
        item = fused("s", 1.0, path="x.md", file_mtime=NOW - 30 * DAY, text_score=0.4)
        [decayed] = apply_temporal_decay([item], now=NOW, half_life_days=30.0)
        explanation = decayed.explanation(mmr_rank=2)
        assert explanation.decay_factor == pytest.approx(0.5)
        assert explanation.fused_score == pytest.approx(0.5)
        assert explanation.text_score == 0.4
        assert explanation.mmr_rank == 2


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
        from memlane.domain.chunks import ChunkId
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
