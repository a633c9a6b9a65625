"""The search's time step: which questions it reads, and that reading reorders by time."""

from __future__ import annotations

import calendar
from dataclasses import replace

from memlane.application.time_ranking import rank_by_time
from memlane.domain.config import QuerySettings
from memlane.domain.scoring import Fused
from tests.unit.domain._scoring_support import fused, ids

DAY = 86_400.0
ASKED = float(calendar.timegm((2026, 11, 18, 9, 0, 0)))


def _hits() -> list[Fused]:
    # c1 written a week ago ranks first on its words; c2 was written yesterday.
    return [
        fused(
            "c1",
            0.9,
            text="the retry policy",
            time_start=ASKED - 7 * DAY,
            time_end=ASKED - 7 * DAY + 60,
            source="sessions",
        ),
        fused(
            "c2",
            0.8,
            text="the retry policy again",
            time_start=ASKED - DAY,
            time_end=ASKED - DAY + 60,
            source="sessions",
        ),
    ]


def test_a_question_naming_no_time_is_not_read() -> None:
    hits = _hits()
    kept, words = rank_by_time(
        hits, "what is the retry policy", settings=QuerySettings(), as_of=ASKED, explain=False
    )
    assert kept == hits
    assert words is None


def test_a_window_in_the_question_lifts_the_hits_written_in_it() -> None:
    kept, words = rank_by_time(
        _hits(),
        "what did we say about the retry policy yesterday",
        settings=QuerySettings(),
        as_of=ASKED,
        explain=False,
    )
    assert ids(kept) == ["c2", "c1"]
    assert words is not None and "yesterday" in words


def test_every_boost_off_leaves_a_timed_question_alone() -> None:
    off = replace(QuerySettings(), time_boost=0.0, time_order_boost=0.0, when_boost=0.0)
    hits = _hits()
    kept, words = rank_by_time(
        hits, "the retry policy yesterday", settings=off, as_of=ASKED, explain=False
    )
    assert kept == hits
    assert words is None


def test_explain_reads_the_question_even_without_a_boost() -> None:
    off = replace(QuerySettings(), time_boost=0.0, time_order_boost=0.0, when_boost=0.0)
    kept, words = rank_by_time(
        _hits(), "the retry policy yesterday", settings=off, as_of=ASKED, explain=True
    )
    assert ids(kept) == ["c1", "c2"]
    assert words is not None and "yesterday" in words
