"""The window boost reads the times a memory mentions, against when it was written."""

from __future__ import annotations

import calendar
from dataclasses import replace

import pytest

from memlane.domain.scoring import Fused
from memlane.domain.sources import Source
from memlane.domain.time_boost import TimeStrengths, apply_time_boost, boost_by_time, hold_places
from memlane.domain.time_questions import mentioned_windows
from memlane.domain.time_words import TimeIntent, named_windows, read_time_words
from tests.unit.domain._scoring_support import fused


def _at(y: int, m: int, d: int, h: int = 0, mi: int = 0, s: int = 0) -> float:
    return float(calendar.timegm((y, m, d, h, mi, s)))


WRITTEN = _at(2023, 10, 9, 13, 56)  # a Monday: the session's messages
ASKED = _at(2023, 12, 1)


def _day(y: int, m: int, d: int) -> tuple[float, float]:
    return _at(y, m, d), _at(y, m, d, 23, 59, 59)


def _hit(
    n: int,
    text: str,
    score: float,
    written: float | None = WRITTEN,
    *,
    source: Source = "sessions",
    until: float | None = None,
) -> Fused:
    end = None if written is None else until if until is not None else written + 60
    return fused(
        f"c{n}",
        score,
        text=text,
        text_score=score,
        source=source,
        path="sessions/s.jsonl" if source == "sessions" else "memory/notes.md",
        time_start=written,
        time_end=end,
    )


def _intent(question: str) -> TimeIntent:
    intent = read_time_words(question, ASKED)
    assert intent is not None
    return intent


class TestNamedWindows:
    def test_a_relative_time_is_read_against_when_the_text_was_written(self) -> None:
        assert named_windows("Last Friday I went to the car show.", WRITTEN) == [_day(2023, 10, 6)]
        assert named_windows("Yesterday we got back from Bali", WRITTEN) == [_day(2023, 10, 8)]

    def test_every_time_the_text_names_is_found(self) -> None:
        found = named_windows("In 2021 I started, and two days ago I quit.", WRITTEN)
        assert (_at(2021, 1, 1), _at(2021, 12, 31, 23, 59, 59)) in found
        assert _day(2023, 10, 7) in found

    def test_a_text_without_time_words_names_none(self) -> None:
        assert named_windows("I may ask for a second opinion and march forward", WRITTEN) == []

    def test_an_ordinal_before_a_noun_names_no_day(self) -> None:
        # An assistant's history lesson is not about the 19th of the month it was written in.
        text = "Photography changed painting in the 19th century; she took the 1st place."
        assert named_windows(text, WRITTEN) == []


class TestMentionedWindows:
    def test_only_relative_times_are_mentions(self) -> None:
        # "in 2021" is a word the keyword leg matches; "two days ago" is a day no word names.
        text = "In 2021 I started.\nTwo days ago I quit, on 3 October 2023."
        assert mentioned_windows(text, WRITTEN) == [_day(2023, 10, 7)]

    def test_a_month_without_its_year_is_read_against_the_writing(self) -> None:
        assert mentioned_windows("We moved in March.", WRITTEN) == [
            (_at(2023, 3, 1), _at(2023, 3, 31, 23, 59, 59))
        ]


class TestMentionsInTheWindowBoost:
    def test_the_line_about_the_asked_day_outranks_the_rest_of_a_later_session(self) -> None:
        # Both chunks were written on 9 October; only one says it is about the 6th.
        other = _hit(1, "The cars at the dealership were shiny and new.", 0.9)
        about = _hit(2, "Last Friday I went to the car show, it was great!", 0.8)
        out = apply_time_boost(
            [other, about], _intent("What did I do on 6 October 2023?"), strength=1.0
        )
        assert [h.chunk_id for h in out] == ["c2", "c1"]
        assert out[0].time_boost == 1.0 and out[1].time_boost < 1.0

    def test_a_mention_wider_than_the_window_says_nothing_about_the_day(self) -> None:
        wide = _hit(1, "This year I went to many shows, in 2023 mostly car shows.", 0.9)
        boosted = apply_time_boost(
            [wide], _intent("What did I do on 6 October 2023?"), strength=1.0
        )
        assert boosted[0].time_boost < 1.0

    def test_a_mention_wider_than_a_day_counts_for_a_wider_window(self) -> None:
        about = _hit(1, "Last week I was in Boston.", 0.5)
        elsewhere = _hit(2, "I am in Boston now.", 0.6)  # written two days after it
        out = apply_time_boost(
            [elsewhere, about],
            _intent("Where was I in the first week of October 2023?"),
            strength=1.0,
        )
        assert out[0].chunk_id == "c1" and out[0].time_boost == 1.0

    def test_a_mention_next_to_the_window_gets_part_of_the_weight(self) -> None:
        near = _hit(1, "Two days ago I went to the car show.", 0.5)  # 7 October
        boosted = apply_time_boost(
            [near], _intent("What did I do on 6 October 2023?"), strength=1.0
        )
        assert 0.5 < boosted[0].time_boost < 1.0

    def test_a_page_that_names_the_asked_year_is_not_lifted_for_it(self) -> None:
        # Every page of a report names years; the one that answers need not.
        answer = _hit(1, "Online sales grew by 40 % over two years.", 0.9, written=ASKED)
        names_it = _hit(2, "The 2018 report lists the board members.", 0.8, written=ASKED)
        out = apply_time_boost(
            [answer, names_it], _intent("How much did online sales grow in 2018?"), strength=1.0
        )
        assert [h.chunk_id for h in out] == ["c1", "c2"]

    def test_a_note_dated_by_its_mtime_reads_no_mention(self) -> None:
        # The mtime says when the file was last saved, not when "last Friday" was written.
        saved = _hit(1, "Last Friday I went to the car show.", 0.5, source="memory")
        boosted = apply_time_boost(
            [saved], _intent("What did I do on 6 October 2023?"), strength=1.0
        )
        assert boosted[0].time_boost < 1.0

    def test_a_dated_note_reads_its_mentions(self) -> None:
        day = _day(2023, 10, 9)  # memory/2023-10-09.md, or a "## 2023-10-09" heading
        dated = _hit(
            1, "Last Friday I went to the car show.", 0.5, day[0], source="memory", until=day[1]
        )
        boosted = apply_time_boost(
            [dated], _intent("What did I do on 6 October 2023?"), strength=1.0
        )
        assert boosted[0].time_boost == 1.0

    def test_a_chunk_with_no_time_reads_no_mention(self) -> None:
        undated = _hit(1, "Last Friday I went to the car show.", 0.5, written=None)
        dated = _hit(2, "Something else entirely.", 0.5)
        out = apply_time_boost(
            [undated, dated], _intent("What did I do on 6 October 2023?"), strength=1.0
        )
        assert out[0].time_boost == out[1].time_boost == 0.5


# --- how far the boosts may push a hit down ------------------------------------------------------


def _ranked(scores: list[float]) -> list[Fused]:
    return [fused(f"h{i}", score) for i, score in enumerate(scores)]


def _boosted(before: list[Fused], factors: list[float]) -> list[Fused]:
    out = [
        replace(item, score=item.score * f, time_boost=f)
        for item, f in zip(before, factors, strict=True)
    ]
    return sorted(out, key=lambda item: -item.score)


def test_no_hit_ends_more_than_max_drop_places_down() -> None:
    before = _ranked([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3])
    # The last four are in the window; the first three lose most of their score.
    after = _boosted(before, [0.3, 0.3, 0.3, 1, 1, 1, 1])
    assert [h.chunk_id for h in after][:4] == ["h3", "h4", "h5", "h6"]
    held = hold_places(before, after, max_drop=2)
    order = [h.chunk_id for h in held]
    for i, item in enumerate(before):
        assert order.index(item.chunk_id) <= i + 2
    assert order == ["h3", "h4", "h0", "h1", "h2", "h5", "h6"]
    scores = [h.score for h in held]
    assert scores == sorted(scores, reverse=True)  # scores stay sorted
    # A held hit's multiplier is what was applied, and never above 1.
    for h in held:
        unboosted = next(b.score for b in before if b.chunk_id == h.chunk_id)
        assert h.score == pytest.approx(unboosted * h.time_boost)
        assert h.time_boost <= 1.0


def test_hold_places_keeps_a_boost_that_moves_nobody_far() -> None:
    before = _ranked([0.9, 0.8, 0.7, 0.6])
    after = _boosted(before, [0.5, 1, 1, 1])  # h0 falls 3 places
    assert [h.chunk_id for h in hold_places(before, after, max_drop=3)] == [
        h.chunk_id for h in after
    ]
    assert [h.chunk_id for h in hold_places(before, after, max_drop=0)] == [
        h.chunk_id for h in before
    ]


def test_the_searchers_time_step_holds_places_when_asked() -> None:
    inside = _at(2023, 10, 6, 12)
    pool = [
        _hit(0, "we talked about the car", 0.7, written=_at(2023, 8, 1)),
        _hit(1, "the car show was fun", 0.5, written=inside),
        _hit(2, "the car was red", 0.4, written=inside),
    ]
    question = "What did Dave do on 6 October 2023?"
    free, _ = boost_by_time(pool, question, as_of=ASKED, strengths=TimeStrengths(window=1.0))
    held, _ = boost_by_time(
        pool, question, as_of=ASKED, strengths=TimeStrengths(window=1.0, max_drop=1)
    )
    assert [h.chunk_id for h in free] == ["c1", "c2", "c0"]
    assert [h.chunk_id for h in held] == ["c1", "c0", "c2"]


def test_hold_places_keeps_hits_of_two_stores_that_share_a_chunk_id() -> None:
    before = [fused("same", 0.9, path="a/MEMORY.md"), fused("same", 0.8, path="b/MEMORY.md")]
    after = _boosted(before, [0.5, 1.0])
    held = hold_places(before, after, max_drop=1)
    assert sorted(h.path for h in held) == ["a/MEMORY.md", "b/MEMORY.md"]


class TestOpenWindows:
    """ "since 2023" opens the window up to the day asked; its neighbourhood stays a day, not half
    the (long) window: a memory of 2021 must not be lifted as almost inside it."""

    def test_since_lifts_what_came_after_and_not_what_came_long_before(self) -> None:
        intent = _intent("what changed since 2023")
        inside = _hit(1, "inside", 0.5, _at(2023, 11, 20))
        long_before = _hit(2, "long before", 0.5, _at(2021, 6, 1))
        day_before = _hit(3, "day before", 0.5, _at(2022, 12, 31, 23))

        out = {
            str(h.chunk_id): h.time_boost
            for h in apply_time_boost([inside, long_before, day_before], intent, strength=1.0)
        }

        assert out["c1"] == 1.0
        assert out["c2"] == 0.5  # no lift: a year and a half outside
        assert 0.5 < out["c3"] < 1.0  # an hour before the window: the neighbourhood

    def test_since_is_wider_than_the_day_it_names(self) -> None:
        intent = _intent("what changed since Monday")  # asked Friday 2023-12-01
        thursday = _hit(1, "x", 0.5, _at(2023, 11, 30, 9))

        (out,) = apply_time_boost([thursday], intent, strength=1.0)

        assert out.time_boost == 1.0
