"""When each chunk was written: dated file names, dated headings, message times, the mtime."""

from __future__ import annotations

import calendar
import datetime as dt
import math

import pytest

from memlane.domain.chunk_times import (
    dated_file_day,
    day_range,
    heading_date,
    heading_days,
    iso_time,
    note_line_times,
    transcript_line_times,
)
from memlane.domain.chunking import chunk_text
from memlane.domain.chunks import ChunkingPolicy
from memlane.domain.errors import InvalidQuery
from memlane.domain.search import TimeWindow, check_window
from memlane.domain.time_bounds import parse_time_bound


def _day(y: int, m: int, d: int) -> tuple[float, float]:
    start = float(calendar.timegm((y, m, d, 0, 0, 0)))
    return start, start + 86_399


MTIME = 1_700_000_000.0


class TestHeadings:
    @pytest.mark.parametrize(
        ("line", "expected"),
        [
            ("## 2026-11-17", dt.date(2026, 11, 17)),
            ("# Standup 2026/11/17", dt.date(2026, 11, 17)),
            ("### 17 Nov 2026", dt.date(2026, 11, 17)),
            ("## 17. November 2026", dt.date(2026, 11, 17)),
            ("## November 17, 2026", dt.date(2026, 11, 17)),
            ("## Nov 17th 2026 — retro", dt.date(2026, 11, 17)),
            ("## 2026年11月17日", dt.date(2026, 11, 17)),
            ("## 2026년 11월 17일 회의", dt.date(2026, 11, 17)),
            ("## 17.11.2026", dt.date(2026, 11, 17)),  # dotted: always day first
            ("## Standup (17/11/2026)", dt.date(2026, 11, 17)),
            ("## 11/17/2026", dt.date(2026, 11, 17)),
            ("## 11/12/2026 and 17/11/2026", dt.date(2026, 11, 17)),  # the plain one
            ("## Retro 17 Nov 2026, follow-up of 2026-11-03", dt.date(2026, 11, 17)),  # the first
        ],
    )
    def test_a_dated_heading_names_its_day(self, line: str, expected: dt.date) -> None:
        assert heading_date(line) == expected

    @pytest.mark.parametrize(
        "line",
        [
            "## Plans for May",
            "2026-11-17 not a heading",
            "## 2026-02-30",
            "## Release 2.0.1",
            "#x",
            "## 11/12/2026",  # 11 December or 12 November: not guessed
            "## Release v1.10.2026",
            "## 2025-W53",  # 2025 has 52 ISO weeks
        ],
    )
    def test_no_date(self, line: str) -> None:
        assert heading_date(line) is None

    @pytest.mark.parametrize(
        ("line", "first", "last"),
        [
            ("## 2026-11-17 – 2026-11-20", dt.date(2026, 11, 17), dt.date(2026, 11, 20)),
            ("## 2026-11-17 to 2026-11-20 offsite", dt.date(2026, 11, 17), dt.date(2026, 11, 20)),
            ("## 17 Nov 2026 - 20 Nov 2026", dt.date(2026, 11, 17), dt.date(2026, 11, 20)),
            ("## 2026年11月17日〜2026年11月20日", dt.date(2026, 11, 17), dt.date(2026, 11, 20)),
            ("## 2026-W47", dt.date(2026, 11, 16), dt.date(2026, 11, 22)),
            ("## Week 2026-W53 retro", dt.date(2026, 12, 28), dt.date(2027, 1, 3)),
            # not ranges: a later date that is no range's end, a range backwards
            ("## 2026-11-17 - retro of 2026-11-03", dt.date(2026, 11, 17), dt.date(2026, 11, 17)),
            ("## 2026-11-20 – 2026-11-17", dt.date(2026, 11, 20), dt.date(2026, 11, 20)),
        ],
    )
    def test_a_heading_range_or_week_names_its_days(
        self, line: str, first: dt.date, last: dt.date
    ) -> None:
        assert heading_days(line) == (first, last)

    def test_dated_file_names(self) -> None:
        assert dated_file_day("memory/2026-11-17.md") == dt.date(2026, 11, 17)
        assert dated_file_day("2026-01-02.md") == dt.date(2026, 1, 2)
        assert dated_file_day("memory/2026-02-30.md") is None
        assert dated_file_day("memory/notes.md") is None


class TestNoteLines:
    def test_a_dated_heading_dates_its_section_until_a_heading_of_its_level(self) -> None:
        lines = [
            "intro",
            "## 2026-11-17",
            "did a thing",
            "### details",
            "more",
            "## Undated",
            "later",
            "## 18 Nov 2026",
            "x",
        ]
        times = note_line_times(lines, "notes/log.md")

        assert times[0] is None
        assert times[1:5] == [_day(2026, 11, 17)] * 4
        assert times[5:7] == [None] * 2
        assert times[7:] == [_day(2026, 11, 18)] * 2

    def test_a_ranged_heading_dates_its_section_over_the_range(self) -> None:
        times = note_line_times(["## 2026-11-17 – 2026-11-20", "offsite"], "notes/log.md")

        assert times == [(_day(2026, 11, 17)[0], _day(2026, 11, 20)[1])] * 2

    def test_a_dated_file_dates_its_undated_lines(self) -> None:
        times = note_line_times(["a", "## 2026-11-18", "b"], "memory/2026-11-17.md")

        assert times == [_day(2026, 11, 17), _day(2026, 11, 18), _day(2026, 11, 18)]

    def test_a_dated_setext_heading_dates_its_section(self) -> None:
        times = note_line_times(["intro", "", "17 Nov 2026", "-----------", "x"], "n.md")

        assert times == [None, None] + [_day(2026, 11, 17)] * 3

    def test_a_heading_after_a_tilde_line_in_a_backtick_fence_is_still_code(self) -> None:
        times = note_line_times(["```", "~~~", "## 2026-11-17", "```", "x"], "n.md")

        assert set(times) == {None}

    def test_a_heading_inside_a_code_fence_is_not_a_heading(self) -> None:
        times = note_line_times(["```", "## 2026-11-17", "```", "x"], "n.md")

        assert set(times) == {None}


class TestTranscripts:
    def test_each_message_has_its_time_and_gaps_take_a_neighbour(self) -> None:
        times = transcript_line_times([None, 10.0, None, 30.0], MTIME)

        assert times == [(10.0, 10.0), (10.0, 10.0), (10.0, 10.0), (30.0, 30.0)]

    def test_no_time_at_all_is_the_mtime(self) -> None:
        assert transcript_line_times([None, None], MTIME) == [(MTIME, MTIME)] * 2


class TestChunks:
    def test_a_chunk_spans_the_times_of_its_lines(self) -> None:
        text = "## 2026-11-17\nmorning notes\n## 2026-11-19\nevening notes\n"
        chunks = chunk_text("memory", "log.md", text, ChunkingPolicy(400, 0), mtime=MTIME)

        assert len(chunks) == 1
        assert (chunks[0].time_start, chunks[0].time_end) == (
            _day(2026, 11, 17)[0],
            _day(2026, 11, 19)[1],
        )

    def test_an_undated_title_does_not_stretch_a_dated_chunk_to_the_mtime(self) -> None:
        chunks = chunk_text("memory", "log.md", "# Log\n## 17 Nov 2026\nx\n", ChunkingPolicy())
        undated = chunk_text("memory", "n.md", "# Notes\nx\n", ChunkingPolicy(), mtime=MTIME)
        dated = chunk_text(
            "memory", "log.md", "# Log\n## 17 Nov 2026\nx\n", ChunkingPolicy(), mtime=MTIME
        )

        assert (chunks[0].time_start, chunks[0].time_end) == (None, None)  # no mtime given
        assert (undated[0].time_start, undated[0].time_end) == (MTIME, MTIME)
        assert (dated[0].time_start, dated[0].time_end) == _day(2026, 11, 17)

    def test_undated_text_beside_a_dated_section_widens_the_chunk_to_the_mtime(self) -> None:
        """The preferences were written at the mtime; the chunk was dated 17 Nov alone, so
        `--since` the mtime's day did not find them."""
        text = (
            "# Long-term memory\n\n## Preferences\nThe user prefers dark mode.\n\n"
            "## 2026-11-17\nWe decided the rollback uses blue-green.\n"
        )
        (chunk,) = chunk_text("memory", "MEMORY.md", text, ChunkingPolicy(), mtime=MTIME)

        assert (chunk.time_start, chunk.time_end) == (MTIME, _day(2026, 11, 17)[1])

    @pytest.mark.parametrize(
        "text",
        [
            "# Log\n---\n## 17 Nov 2026\nx\n",  # a title and a rule
            "Log\n===\n\n## 17 Nov 2026\nx\n",  # a setext title and its underline
            "## 17 Nov 2026\nx\n\n***\n\n",  # a closing rule
        ],
    )
    def test_headings_and_rules_alone_do_not_widen_it(self, text: str) -> None:
        (chunk,) = chunk_text("memory", "log.md", text, ChunkingPolicy(), mtime=MTIME)

        assert (chunk.time_start, chunk.time_end) == _day(2026, 11, 17)

    def test_a_chunk_of_the_dated_section_alone_keeps_its_day(self) -> None:
        text = "intro text\n\n## 17 Nov 2026\n" + "dated line\n" * 60
        chunks = chunk_text("memory", "log.md", text, ChunkingPolicy(40, 0), mtime=MTIME)

        assert (chunks[0].time_start, chunks[0].time_end) == (MTIME, _day(2026, 11, 17)[1])
        assert (chunks[-1].time_start, chunks[-1].time_end) == _day(2026, 11, 17)

    def test_transcript_chunks_span_their_messages(self) -> None:
        chunks = chunk_text(
            "sessions",
            "s.jsonl",
            "User: " + "a" * 20 + "\nAssistant: " + "b" * 20 + "\nUser: " + "c" * 20,
            ChunkingPolicy(16, 0),
            line_numbers=[1, 2, 3],
            line_timestamps=[100.0, 200.0, 300.0],
            mtime=MTIME,
        )

        assert [(c.time_start, c.time_end) for c in chunks] == [(100.0, 200.0), (300.0, 300.0)]

    def test_without_the_mtime_no_time_is_made_up(self) -> None:
        chunks = chunk_text("memory", "a.md", "hello", ChunkingPolicy())

        assert (chunks[0].time_start, chunks[0].time_end) == (None, None)


class TestIso:
    def test_an_instant_and_an_interval(self) -> None:
        assert iso_time(0.0, 0.0) == "1970-01-01T00:00:00Z"
        start, end = _day(2026, 11, 17)
        assert iso_time(start, end) == "2026-11-17T00:00:00Z/2026-11-17T23:59:59Z"
        assert iso_time(None, None) is None


NOW = float(calendar.timegm((2026, 11, 20, 12, 0, 0)))


class TestTimeBounds:
    @pytest.mark.parametrize(
        ("value", "end", "expected"),
        [
            ("2026-11-01", False, _day(2026, 11, 1)[0]),
            ("2026-11-15", True, _day(2026, 11, 15)[1]),
            ("2026-11-15T10:30:00", False, _day(2026, 11, 15)[0] + 10.5 * 3600),
            ("2026-11-15T10:30:00+02:00", False, _day(2026, 11, 15)[0] + 8.5 * 3600),
            ("2026-11-15T10:30:00Z", False, _day(2026, 11, 15)[0] + 10.5 * 3600),
            ("7d", False, NOW - 7 * 86_400),
            ("12h", True, NOW - 12 * 3600),
            ("2w", False, NOW - 14 * 86_400),
            (" 30m ", False, NOW - 1800),
            (1_700_000_000, False, 1_700_000_000.0),
            ("1700000000", False, 1_700_000_000.0),  # epoch seconds from a command line
            (" 1700000000.5 ", True, 1_700_000_000.5),
            (dt.date(2026, 11, 3), True, _day(2026, 11, 3)[1]),
            (dt.datetime(2026, 11, 3, 6, tzinfo=dt.UTC), False, _day(2026, 11, 3)[0] + 6 * 3600),
            (None, False, None),
            # a month or an ISO week is taken whole, as a date is
            ("2026-11", False, _day(2026, 11, 1)[0]),
            ("2026-11", True, _day(2026, 11, 30)[1]),
            ("2026-02", True, _day(2026, 2, 28)[1]),
            ("2026-W47", False, _day(2026, 11, 16)[0]),
            ("2026-W47", True, _day(2026, 11, 22)[1]),  # not Monday's first second
            ("2026w47", True, _day(2026, 11, 22)[1]),
            ("2026-W47-3", True, _day(2026, 11, 18)[1]),
            ("9999-W52", True, _day(9999, 12, 31)[1]),  # the week runs past the calendar
        ],
    )
    def test_readable_bounds(self, value: object, end: bool, expected: float | None) -> None:
        assert parse_time_bound(value, now=NOW, end=end, name="since") == expected

    @pytest.mark.parametrize(
        "value",
        [
            "last week",
            "7 parsecs",
            "",
            True,
            [1],
            math.inf,
            "11/17",
            "2026-13",
            "2026-W00",
            "2026-W54",
        ],
    )
    def test_unreadable_bounds_are_refused_saying_why(self, value: object) -> None:
        with pytest.raises(InvalidQuery, match="since"):
            parse_time_bound(value, now=NOW, end=False, name="since")

    def test_the_refusal_says_which_span_unit_is_minutes_and_which_months(self) -> None:
        with pytest.raises(InvalidQuery, match=r"30m \(minutes\), 2w, 3mo \(months\)"):
            parse_time_bound("3 months", now=NOW, end=False, name="since")

    @pytest.mark.parametrize("value", ["2026", "0", "-5", "17000000"])
    def test_a_short_bare_number_is_refused_not_read_as_epoch_seconds(self, value: str) -> None:
        with pytest.raises(InvalidQuery, match=r"nine digits or more.*2026-01-01"):
            parse_time_bound(value, now=NOW, end=False, name="since")

    @pytest.mark.parametrize(
        "value", [1e30, -1e12, "99999999999999999999", "999999999999.5", "9000y"]
    )
    def test_a_time_outside_the_calendar_is_refused_as_its_date_would_be(
        self, value: object
    ) -> None:
        """1e30 was read as given and matched nothing: the search answered "no results",
        while 10000-01-01, the same kind of time, was refused."""
        with pytest.raises(InvalidQuery, match=r"since: .* is outside the years 1 to 9999"):
            parse_time_bound(value, now=NOW, end=False, name="since")

    def test_the_calendar_s_own_ends_are_times(self) -> None:
        first = parse_time_bound("0001-01-01", now=NOW, end=False, name="since")
        last = parse_time_bound("9999-12-31", now=NOW, end=True, name="until")
        assert (first, last) == (-62_135_596_800.0, 253_402_300_799.0)
        assert parse_time_bound(last, now=NOW, end=True, name="until") == last

    def test_an_empty_window_is_refused(self) -> None:
        with pytest.raises(InvalidQuery, match="empty"):
            check_window(20.0, 10.0)
        assert check_window(None, None) is None
        assert check_window(1.0, None) == TimeWindow(1.0, None)

    def test_day_range_is_the_whole_utc_day(self) -> None:
        assert day_range(dt.date(2026, 11, 17)) == _day(2026, 11, 17)

    @pytest.mark.parametrize("bad", [1772352000000000.0, 1e300, -5e15, float("inf")])
    def test_a_stored_time_no_date_can_show_is_no_time(self, bad: float) -> None:
        # An index built before transcripts' times were range-checked may hold one: the hit
        # goes without its time instead of a traceback failing every search.
        assert iso_time(bad, bad) is None
        assert iso_time(0.0, bad) is None


class TestNumbersThatAreNoEpochSeconds:
    """A number is epoch seconds; one that reads as a year or as milliseconds is refused with
    what it would have meant, not read quietly into a filter that keeps everything."""

    @pytest.mark.parametrize("value", [2026, 2026.0, 1999])
    def test_a_year_given_as_a_number_is_refused(self, value: float) -> None:
        with pytest.raises(InvalidQuery, match=r"epoch seconds in 1970, not the year"):
            parse_time_bound(value, now=NOW, end=False, name="since")

    def test_epoch_milliseconds_are_refused_with_the_seconds_they_would_be(self) -> None:
        with pytest.raises(InvalidQuery, match=r"as epoch milliseconds it would be 1763370000"):
            parse_time_bound(1_763_370_000_000, now=NOW, end=False, name="since")

    def test_seconds_past_the_year_9999_get_no_milliseconds_hint(self) -> None:
        with pytest.raises(InvalidQuery) as refused:
            parse_time_bound(253_402_300_800, now=NOW, end=False, name="since")

        assert "milliseconds" not in str(refused.value)

    @pytest.mark.parametrize("value", [0, 1_763_370_000, -86_400, 2026.5])
    def test_other_numbers_are_epoch_seconds(self, value: float) -> None:
        assert parse_time_bound(value, now=NOW, end=False, name="since") == float(value)
