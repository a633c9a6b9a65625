"""Unit tests: resolving the config tree into MemorySettings: numbers clamped to their range,
fusion weights normalised, the candidate pool's size."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlane.domain.config import MemorySettings, candidate_limit
from memlane.entrypoints.config.runtime import (
    resolve_settings,
)
from tests.unit.entrypoints.config_trees import nested, tree


def _get(path: str) -> Callable[[MemorySettings], object]:
    def read(settings: MemorySettings) -> object:
        value: object = settings
        for part in path.split("."):
            value = getattr(value, part)
        return value

    return read


class TestClamps:
    @pytest.mark.parametrize(
        ("key", "value", "field", "expected"),
        [
            ("chunking.tokens", 0, "chunking.tokens", 1),
            ("chunking.tokens", 250.7, "chunking.tokens", 250),
            ("chunking.overlap", -5, "chunking.overlap", 0),
            ("query.maxResults", 0, "query.max_results", 1),
            ("query.maxResults", -3, "query.max_results", 1),
            ("query.maxResults", 1000, "query.max_results", 100),
            ("query.maxResults", 3.9, "query.max_results", 3),
            ("query.minScore", -1, "query.min_score", 0.0),
            ("query.minScore", 2, "query.min_score", 1.0),
            ("query.relevanceFloor", -1, "query.relevance_floor", 0.0),
            ("query.relevanceFloor", 1.5, "query.relevance_floor", 1.0),
            ("query.relevanceTermShare", -1, "query.relevance_term_share", 0.0),
            ("query.relevanceTermShare", 2, "query.relevance_term_share", 1.0),
            ("query.relevanceKeywordTermShare", -1, "query.relevance_keyword_term_share", 0.0),
            ("query.relevanceKeywordTermShare", 2, "query.relevance_keyword_term_share", 1.0),
            ("query.hybrid.candidateMultiplier", 50, "query.hybrid.candidate_multiplier", 20),
            ("query.hybrid.candidateMultiplier", 0, "query.hybrid.candidate_multiplier", 1),
            ("query.hybrid.minCandidates", 0, "query.hybrid.min_candidates", 1),
            ("query.hybrid.minCandidates", 5000, "query.hybrid.min_candidates", 1000),
            ("query.hybrid.rrfK", 0, "query.hybrid.rrf_k", 1),
            ("query.hybrid.mmr.lambda", 5, "query.hybrid.mmr.lambda_", 1.0),
            (
                "query.hybrid.temporalDecay.halfLifeDays",
                0.5,
                "query.hybrid.temporal_decay.half_life_days",
                1,
            ),
            ("cache.maxEntries", 0, "cache.max_entries", 1),
            ("remote.batch.concurrency", 0, "remote.batch.concurrency", 1),
            ("sync.sessions.deltaBytes", -1, "sync.sessions.delta_bytes", 0),
            ("sync.sessions.deltaMessages", 12.6, "sync.sessions.delta_messages", 12),
            ("sync.watchDebounceMs", -10, "sync.watch_debounce_ms", 0),
            ("sync.firstSearchWaitMs", 10**9, "sync.first_search_wait_ms", 600_000),
            ("remote.maxConcurrency", 0, "remote.max_concurrency", 1),
        ],
    )
    def test_out_of_range_numbers_are_clamped_not_rejected(
        self, key: str, value: float, field: str, expected: float
    ) -> None:
        settings = resolve_settings(tree(nested(key, value)))

        assert _get(field)(settings) == expected

    def test_overlap_stays_below_the_token_budget(self) -> None:
        chunking = resolve_settings(tree({"chunking": {"tokens": 50, "overlap": 80}})).chunking

        assert (chunking.tokens, chunking.overlap) == (50, 49)

    def test_overlap_is_zero_for_a_one_token_budget(self) -> None:
        chunking = resolve_settings(tree({"chunking": {"tokens": 1, "overlap": 5}})).chunking

        assert chunking.overlap == 0

    @pytest.mark.parametrize(
        ("vector", "text", "expected"),
        [(1, 1, (0.5, 0.5)), (0, 0, (0.5, 0.5)), (2, 0, (1.0, 0.0)), (0.6, 0.2, (0.75, 0.25))],
    )
    def test_hybrid_weights_are_clamped_then_normalised(
        self, vector: float, text: float, expected: tuple[float, float]
    ) -> None:
        hybrid = resolve_settings(
            tree({"query": {"hybrid": {"vectorWeight": vector, "textWeight": text}}})
        ).query.hybrid

        assert hybrid.vector_weight == pytest.approx(expected[0])
        assert hybrid.text_weight == pytest.approx(expected[1])

    @pytest.mark.parametrize(
        ("fusion", "expected"),
        [(None, (0.5, 0.5)), ("zscore", (0.5, 0.5)), ("weighted", (0.7, 0.3)), ("rrf", (0.7, 0.3))],
    )
    def test_unset_weights_default_per_fusion(
        self, fusion: str | None, expected: tuple[float, float]
    ) -> None:
        hybrid_tree = {} if fusion is None else {"fusion": fusion}
        hybrid = resolve_settings(tree({"query": {"hybrid": hybrid_tree}})).query.hybrid

        assert hybrid.fusion == (fusion or "zscore")
        assert (hybrid.vector_weight, hybrid.text_weight) == pytest.approx(expected)

    def test_one_weight_set_takes_the_other_from_the_fusion_default(self) -> None:
        hybrid = resolve_settings(
            tree({"query": {"hybrid": {"fusion": "weighted", "vectorWeight": 0.6}}})
        ).query.hybrid

        assert (hybrid.vector_weight, hybrid.text_weight) == pytest.approx((0.6 / 0.9, 0.3 / 0.9))

    def test_weights_from_two_levels_are_normalised_together(self) -> None:
        root = tree(
            {"query": {"hybrid": {"vectorWeight": 0.3}}},
            {"id": "main", "memorySearch": {"query": {"hybrid": {"textWeight": 0.1}}}},
        )

        hybrid = resolve_settings(root).query.hybrid

        assert hybrid.vector_weight == pytest.approx(0.75)

    def test_fusion_can_be_reciprocal_rank(self) -> None:
        hybrid = resolve_settings(tree({"query": {"hybrid": {"fusion": "rrf", "rrfK": 30}}}))

        assert (hybrid.query.hybrid.fusion, hybrid.query.hybrid.rrf_k) == ("rrf", 30)

    def test_relevance_floor_is_unset_by_default_and_read_when_given(self) -> None:
        assert resolve_settings(tree()).query.relevance_floor is None
        configured = resolve_settings(tree({"query": {"relevanceFloor": 0.6}}))
        assert configured.query.relevance_floor == pytest.approx(0.6)

    def test_the_word_share_is_unset_by_default_and_read_when_given(self) -> None:
        assert resolve_settings(tree()).query.relevance_term_share is None
        configured = resolve_settings(tree({"query": {"relevanceTermShare": 0.3}}))
        assert configured.query.relevance_term_share == pytest.approx(0.3)
        assert resolve_settings(tree()).query.relevance_keyword_term_share is None
        keyword = resolve_settings(tree({"query": {"relevanceKeywordTermShare": 0.5}}))
        assert keyword.query.relevance_keyword_term_share == pytest.approx(0.5)

    @given(st.floats(allow_nan=False, allow_infinity=False))
    def test_min_score_always_lands_in_the_unit_interval(self, value: float) -> None:
        score = resolve_settings(tree({"query": {"minScore": value}})).query.min_score

        assert 0.0 <= score <= 1.0

    @given(st.integers(min_value=-(2**60), max_value=2**60))
    def test_max_results_always_lands_in_one_to_a_hundred(self, value: int) -> None:
        assert (
            1 <= resolve_settings(tree({"query": {"maxResults": value}})).query.max_results <= 100
        )


class TestCandidateLimit:
    def test_the_pool_is_max_results_times_the_multiplier(self) -> None:
        settings = resolve_settings(
            tree({"query": {"maxResults": 30, "hybrid": {"candidateMultiplier": 10}}})
        )

        assert candidate_limit(settings.query.hybrid, 30, fused=True) == 300

    def test_a_fused_search_fetches_at_least_min_candidates(self) -> None:
        hybrid = resolve_settings(tree({})).query.hybrid

        assert hybrid.min_candidates == 200
        assert candidate_limit(hybrid, 6, fused=True) == 200

    def test_a_single_leg_fetches_only_what_it_returns_times_the_multiplier(self) -> None:
        hybrid = resolve_settings(tree({})).query.hybrid

        assert candidate_limit(hybrid, 6, fused=False) == 24

    def test_min_candidates_is_configurable(self) -> None:
        hybrid = resolve_settings(tree({"query": {"hybrid": {"minCandidates": 50}}})).query.hybrid

        assert candidate_limit(hybrid, 6, fused=True) == 50
        assert candidate_limit(hybrid, 20, fused=True) == 80

    def test_the_pool_is_capped_at_a_thousand(self) -> None:
        settings = resolve_settings(
            tree({"query": {"maxResults": 100, "hybrid": {"candidateMultiplier": 20}}})
        )

        assert candidate_limit(settings.query.hybrid, 100, fused=True) == 1000
