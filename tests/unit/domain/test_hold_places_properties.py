"""`hold_places` over any scores and boosts: what it promises, checked on generated rankings."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlane.domain.scoring import Fused
from memlane.domain.time_boost import hold_places
from tests.unit.domain._scoring_support import fused

# Scores as the searcher hands them over (in (0, 1]), boosts as the time step makes them
# (multipliers in (0, 1]: a hit in the window keeps its score, the others lose some of it).
_score = st.floats(min_value=0.01, max_value=1.0, allow_nan=False)
_factor = st.sampled_from([0.25, 0.5, 0.8, 1.0]) | st.floats(min_value=0.05, max_value=1.0)


@st.composite
def _boosted_pools(draw: st.DrawFn) -> tuple[list[Fused], list[Fused], int]:
    scores = sorted(draw(st.lists(_score, min_size=1, max_size=30)), reverse=True)
    before = [fused(f"h{i}", s) for i, s in enumerate(scores)]
    factors = draw(st.lists(_factor, min_size=len(before), max_size=len(before)))
    after = sorted(
        (replace(b, score=b.score * f, time_boost=f) for b, f in zip(before, factors, strict=True)),
        key=lambda item: -item.score,
    )
    return before, after, draw(st.integers(min_value=0, max_value=6))


@settings(max_examples=300, deadline=None)
@given(_boosted_pools())
def test_no_hit_falls_more_than_max_drop_places(pool: tuple[list[Fused], list[Fused], int]) -> None:
    before, after, max_drop = pool
    order = [h.chunk_id for h in hold_places(before, after, max_drop)]
    assert sorted(order) == sorted(b.chunk_id for b in before)  # nothing lost, nothing doubled
    for place, item in enumerate(before):
        assert order.index(item.chunk_id) <= place + max_drop


@settings(max_examples=300, deadline=None)
@given(_boosted_pools())
def test_scores_stay_sorted_and_the_multiplier_shown_is_the_one_applied(
    pool: tuple[list[Fused], list[Fused], int],
) -> None:
    before, after, max_drop = pool
    held = hold_places(before, after, max_drop)
    scores = [h.score for h in held]
    assert scores == sorted(scores, reverse=True)
    unboosted = {b.chunk_id: b.score for b in before}
    boosted = {a.chunk_id: a.score for a in after}
    for h in held:
        assert h.score == pytest.approx(unboosted[h.chunk_id] * h.time_boost)
        # Held only ever raises a boosted score, and never past the unboosted one.
        assert boosted[h.chunk_id] - 1e-12 <= h.score <= unboosted[h.chunk_id] + 1e-12


@settings(max_examples=200, deadline=None)
@given(_boosted_pools())
def test_a_cap_as_long_as_the_list_changes_nothing(
    pool: tuple[list[Fused], list[Fused], int],
) -> None:
    before, after, _ = pool
    held = hold_places(before, after, max_drop=len(before))
    assert [h.chunk_id for h in held] == [a.chunk_id for a in after]
    assert [h.score for h in held] == [a.score for a in after]
