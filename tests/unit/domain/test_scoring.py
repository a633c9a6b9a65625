"""Unit tests: bm25 mapping, hybrid fusion (weighted, RRF, z-score) and the min-score threshold."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlane.domain.chunks import ChunkId
from memlane.domain.scoring import (
    apply_min_score,
    bm25_rank_to_score,
    rrf_merge,
    weighted_merge,
    z_to_unit,
    zscore_merge,
)
from tests.unit.domain._scoring_support import (
    cand,
    fused,
    ids,
)


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
