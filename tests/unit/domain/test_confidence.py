"""The standing of a hit above the query's background (domain/confidence.py)."""

from __future__ import annotations

import pytest

from memlane.domain.chunks import ChunkId
from memlane.domain.confidence import (
    AGREEMENT_RANK,
    AGREEMENT_TOP,
    GAP_RANK,
    MIN_BACKGROUND,
    STRONG_GAP,
    background_of,
    legs_disagree,
    no_strong_match,
    top_gap,
)


def test_standing_is_in_background_standard_deviations() -> None:
    # 20 values: the top one (0.95) is trimmed; the rest alternate 0.70 / 0.80.
    cosines = [0.70, 0.80] * 9 + [0.75, 0.95]
    bg = background_of(cosines)
    assert bg is not None and bg.size == 19
    assert bg.mean == pytest.approx(0.75, abs=1e-9)
    assert bg.standing(0.95) == pytest.approx((0.95 - bg.mean) / bg.spread)
    assert bg.standing(0.95) > 3.0 > bg.standing(0.80)


def test_the_same_query_scale_shifted_gets_the_same_standings() -> None:
    """No per-model constant: a model whose cosines sit higher and tighter reads the same."""
    low = [0.1 + 0.01 * i for i in range(30)]
    high = [0.8 + 0.002 * i for i in range(30)]
    a, b = background_of(low), background_of(high)
    assert a is not None and b is not None
    assert a.standing(0.6) == pytest.approx(b.standing(0.9), rel=1e-6)


def test_a_tiny_index_has_no_background() -> None:
    # The best cosine is trimmed: MIN_BACKGROUND must remain besides it.
    assert background_of([0.8] * MIN_BACKGROUND + [0.9]) is not None
    assert background_of([0.8] * (MIN_BACKGROUND - 1) + [0.9]) is None
    assert background_of([]) is None


def test_identical_cosines_make_nothing_stand_out_without_dividing_by_zero() -> None:
    bg = background_of([0.5] * 10)
    assert bg is not None and bg.standing(0.5) == 0.0


def test_the_gap_is_best_less_the_sixth_in_background_spreads() -> None:
    bg = background_of([0.70, 0.80] * 10)
    assert bg is not None
    peaked = [0.95, 0.80, 0.79, 0.78, 0.77, 0.76, 0.75]
    plateau = [0.81, 0.81, 0.80, 0.80, 0.80, 0.80, 0.79]
    assert top_gap(peaked, bg) == pytest.approx((0.95 - 0.76) / bg.spread)
    assert no_strong_match(top_gap(peaked, bg)) is False
    assert no_strong_match(top_gap(plateau, bg)) is True


def test_no_gap_without_enough_candidates_or_a_background() -> None:
    bg = background_of([0.70, 0.80] * 10)
    assert top_gap([0.9] * (GAP_RANK - 1), bg) is None
    assert top_gap([0.9] * GAP_RANK, None) is None
    assert no_strong_match(None) is None
    assert no_strong_match(STRONG_GAP - 0.01) is True
    assert no_strong_match(STRONG_GAP) is False


def _ids(*names: str) -> list[ChunkId]:
    return [ChunkId(n) for n in names]


def test_the_legs_agree_when_a_best_chunk_in_meaning_is_a_best_match_of_the_words() -> None:
    keyword = _ids(*(f"k{i}" for i in range(1, AGREEMENT_RANK)), "v3")  # v3 is the 40th
    assert legs_disagree(_ids("v1", "v2", "v3", "v4"), keyword) is False
    assert AGREEMENT_TOP == 3


def test_the_legs_disagree_past_the_rank_or_the_top() -> None:
    keyword = _ids(*(f"k{i}" for i in range(1, AGREEMENT_RANK + 1)), "v1")  # v1 is the 41st
    assert legs_disagree(_ids("v1", "v2", "v3"), keyword) is True
    # The vector leg's 4th best matching the words first does not count.
    assert legs_disagree(_ids("v1", "v2", "v3", "v4"), _ids("v4", "k1")) is True


def test_no_word_match_at_all_disagrees_and_no_vector_leg_is_not_judged() -> None:
    assert legs_disagree(_ids("v1", "v2"), []) is True
    assert legs_disagree([], _ids("k1")) is None
    # Fewer than three vector candidates: the ones there are count.
    assert legs_disagree(_ids("v1"), _ids("k1", "v1")) is False
