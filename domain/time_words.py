"""Domain: time words in a question ("last week", "in March", "昨天", "지난주"), read against when
it is asked.

`read_time_words(text, as_of)` returns the window the first time expression names (whole UTC
days) and whether the question asks for the earliest or the latest occurrence ("first time",
"most recent", "before ..."), or None when it holds no time word. Table-driven (the words are in
time_words_tables.py, the patterns built from them in time_patterns.py); no I/O, no clock:
`as_of` (epoch seconds) is passed in. A window found here only boosts hits
(domain/time_boost.py); the strict filter is `since` / `until`.

Measured alternative: dateparser 1.5 (a maintained library) took 1.6 s on its first query and
~40 ms per query after, read "we", "May I ask" and "march forward" as dates and missed
"la semana pasada"; the domain may not import it anyway.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from memlane.domain.calendar_days import (
    Days,
    holiday,
    holiday_near,
    latest_date,
    latest_day_of_month,
    recent_days,
    unit_back,
    week_of,
)
from memlane.domain.chunk_times import SECONDS_PER_DAY, day_range
from memlane.domain.time_anchors import anchored
from memlane.domain.time_month_words import (
    Match,
    Matcher,
    month_number,
    month_ranges,
    months_named,
    number_word,
    weeks_of_month,
)
from memlane.domain.time_patterns import (
    AGO,
    CJK_DATE,
    DAY_OF_MONTH,
    HOLIDAY,
    ISO_DATE,
    RECENT,
    SLASH_DATE,
    WEEKDAY,
    YEAR,
    bounded,
)
from memlane.domain.time_spans import CALENDAR_START, OPEN_REACH_DAYS, widen
from memlane.domain.time_words_tables import (
    AFTER,
    BEFORE,
    EARLIEST,
    HOLIDAYS,
    LAST_WEEKEND,
    LATEST,
    NEXT_WEEKEND,
    RELATIVE_UNITS,
    THE_WEEKEND,
    THIS_WEEKEND,
    UNITS,
    WEEKDAYS,
)
from memlane.domain.time_year_parts import months_of_named_years, seasons_named, year_thirds

Order: TypeAlias = Literal["earliest", "latest"]
# Only the head of a long query is read for time words (a pasted log holds many dates).
MAX_CHARS: Final = 2_000


@dataclass(frozen=True, slots=True)
class TimeIntent:
    """What the question says about time: a window (epoch seconds, inclusive) named by
    `phrase`, and/or which end of the candidates' times it asks for (`order`, named by
    `order_phrase`)."""

    phrase: str | None = None
    since: float | None = None
    until: float | None = None
    order: Order | None = None
    order_phrase: str | None = None
    # How far either side of the window a hit still gets some lift (seconds); None: half the
    # window's width, at least a day (domain/time_boost.py). An open window's is a day.
    reach: float | None = None

    def describe(self) -> str:
        """`"last week" → 2026-11-09..2026-11-15; earliest ("first time")`, for --explain."""
        parts = []
        if self.phrase is not None and self.since is not None and self.until is not None:
            first = dt.datetime.fromtimestamp(self.since, tz=dt.UTC).date()
            last = dt.datetime.fromtimestamp(self.until, tz=dt.UTC).date()
            span = first.isoformat() if first == last else f"{first}..{last}"
            if first == CALENDAR_START:
                span = f"up to {last}"
            parts.append(f'"{self.phrase}" → {span}')
        if self.order is not None:
            parts.append(f'{self.order} ("{self.order_phrase}")')
        return "; ".join(parts)


# --- matchers: each yields (start, end, days) for its matches in the lower-cased text ----------


def _relative(text: str, today: dt.date) -> Iterable[Match]:
    for found in _RELATIVE_RE.finditer(text):
        if _OF_RE.match(text, found.end()):
            continue  # "the last year of the project", "the last night of the trip"
        unit, offset = RELATIVE_UNITS[found.group(0)]
        days = unit_back(today, unit, -offset)
        if days is not None:
            yield found.start(), found.end(), days


def _counted(patterns: Sequence[re.Pattern[str]], back: bool) -> Matcher:
    def matcher(text: str, today: dt.date) -> Iterable[Match]:
        for pattern in patterns:
            for found in pattern.finditer(text):
                number = found.groupdict().get("n")  # none: one unit ("in the past week")
                count = 1 if number is None else number_word(number)
                unit = UNITS[found.group("u")]
                if count is None:
                    continue
                days = unit_back(today, unit, count) if back else recent_days(today, unit, count)
                if days is not None:
                    yield found.start(), found.end(), days

    return matcher


def _numeric_dates(text: str, today: dt.date) -> Iterable[Match]:
    for pattern in (_CJK_DATE_RE, _ISO_DATE_RE):
        for found in pattern.finditer(text):
            month = month_number(found.group("m"))
            day = int(found.group("d")) if found.group("d") else None
            year = int(found.group("y")) if found.group("y") else None
            days = None if month is None else latest_date(today, month, day, year)
            if days is not None:
                yield found.start(), found.end(), days


def _slash_dates(text: str, today: dt.date) -> Iterable[Match]:
    for found in _SLASH_DATE_RE.finditer(text):
        first, second = int(found["a"] or found["a2"]), int(found["b"] or found["b2"])
        year = found["y"] or found["y2"]
        if (first > 12) == (second > 12):
            continue  # 3/4: March 4 or 3 April; 13/14: no month
        month, day = (second, first) if first > 12 else (first, second)
        days = latest_date(today, month, day, int(year) if year else None)
        if days is not None:
            yield found.start(), found.end(), days


def _years(text: str, _today: dt.date) -> Iterable[Match]:
    for pattern in _YEAR_RES:
        for found in pattern.finditer(text):
            year = int(found.group("y"))
            yield found.start(), found.end(), (dt.date(year, 1, 1), dt.date(year, 12, 31))


def _days_of_month(text: str, today: dt.date) -> Iterable[Match]:
    for pattern in _DAY_RES:
        for found in pattern.finditer(text):
            day = int(found.group("d"))
            if not 1 <= day <= 31:
                continue
            named = latest_day_of_month(today, day)
            if named is not None:
                yield found.start(), found.end(), (named, named)


_KOREAN_WEEK: Final = re.compile(r"일주일\s*전")


def _korean_week_ago(text: str, today: dt.date) -> Iterable[Match]:
    """일주일 전 ("a week ago"): the calendar week before this one."""
    for found in _KOREAN_WEEK.finditer(text):
        yield found.start(), found.end(), week_of(today - dt.timedelta(weeks=1))


def _holidays(text: str, today: dt.date) -> Iterable[Match]:
    for found in _HOLIDAY_RE.finditer(text):
        rule = HOLIDAYS[found["h"]]
        if found["y"]:
            day = holiday(rule, int(found["y"]))
        else:
            day = holiday_near(rule, today, found["w"])
        if day is not None:
            yield found.start(), found.end(), (day, day)


def _weekdays(text: str, today: dt.date) -> Iterable[Match]:
    monday = week_of(today)[0]
    for found in _WEEKDAY_RE.finditer(text):
        weekday = WEEKDAYS[found.group("w")]
        if found.group("last"):  # that weekday of last week
            day = monday - dt.timedelta(weeks=1) + dt.timedelta(days=weekday)
        elif found.group("next"):  # of next week
            day = monday + dt.timedelta(weeks=1) + dt.timedelta(days=weekday)
        elif found.group("this"):  # of this week
            day = monday + dt.timedelta(days=weekday)
        elif found.group("coming") or found.group("after"):  # its first occurrence after today
            day = today + dt.timedelta(days=(weekday - today.weekday()) % 7 or 7)
        else:  # its latest occurrence before today; "before last": the one before that
            day = today - dt.timedelta(days=(today.weekday() - weekday) % 7 or 7)
            if found.group("before_last"):
                day -= dt.timedelta(weeks=1)
        yield found.start(), found.end(), (day, day)


def _weekend(text: str, today: dt.date) -> Iterable[Match]:
    monday = week_of(today)[0]
    last = (monday - dt.timedelta(2), monday - dt.timedelta(1))
    # "This weekend" said on a Monday is the one just gone; later in the week, the coming one.
    this = last if today.weekday() == 0 else (monday + dt.timedelta(5), monday + dt.timedelta(6))
    ahead = (this[0] + dt.timedelta(7), this[1] + dt.timedelta(7))
    under_way = (monday + dt.timedelta(5), monday + dt.timedelta(6))
    the = under_way if today.weekday() >= 5 else last
    for pattern, days in (
        (_WEEKEND_RE, last),
        (_THIS_WEEKEND_RE, this),
        (_NEXT_WEEKEND_RE, ahead),
        (_THE_WEEKEND_RE, the),
    ):
        for found in pattern.finditer(text):
            yield found.start(), found.end(), days


_RELATIVE_RE: Final = re.compile(bounded(RELATIVE_UNITS))
_OF_RE: Final = re.compile(r"\s+of(?!\w)")
_WEEKEND_RE: Final = re.compile(bounded(LAST_WEEKEND))
_THIS_WEEKEND_RE: Final = re.compile(bounded(THIS_WEEKEND))
_NEXT_WEEKEND_RE: Final = re.compile(bounded(NEXT_WEEKEND))
_THE_WEEKEND_RE: Final = re.compile(bounded(THE_WEEKEND))
_CJK_DATE_RE: Final = re.compile(CJK_DATE)
_ISO_DATE_RE: Final = re.compile(ISO_DATE)
_SLASH_DATE_RE: Final = re.compile(SLASH_DATE)
_YEAR_RES: Final = tuple(re.compile(p) for p in YEAR)
_DAY_RES: Final = tuple(re.compile(p) for p in DAY_OF_MONTH)
_WEEKDAY_RE: Final = re.compile(WEEKDAY)
_HOLIDAY_RE: Final = re.compile(HOLIDAY)
_MATCHERS: Final[tuple[Matcher, ...]] = (
    _relative,
    _counted(tuple(re.compile(p) for p in AGO), back=True),
    _counted(tuple(re.compile(p) for p in RECENT), back=False),
    months_named,
    month_ranges,
    weeks_of_month,
    _numeric_dates,
    _slash_dates,
    _years,
    _days_of_month,
    _weekdays,
    _weekend,
    _holidays,
    _korean_week_ago,
    seasons_named,
    months_of_named_years,
    year_thirds,
)
_ORDERS: Final = (
    ("earliest", re.compile(bounded(EARLIEST))),
    ("latest", re.compile(bounded(LATEST))),
    ("earliest", re.compile(bounded(BEFORE))),
    ("latest", re.compile(bounded(AFTER))),
)


def _day_of(as_of: float) -> dt.date | None:
    """The UTC day of `as_of`; None when it is no day of the calendar (years 1 to 9999)."""
    try:
        return dt.datetime.fromtimestamp(as_of, tz=dt.UTC).date()
    except (OverflowError, OSError, ValueError):
        return None


def _found(head: str, today: dt.date) -> list[Match]:
    found: list[Match] = []
    for matcher in _MATCHERS:
        found.extend(_within_calendar(matcher(head, today)))
    if found:  # an expression read against a date beside it (time_anchors.py)
        reread = functools.partial(_reread, head)
        found.extend(_within_calendar(anchored(head, tuple(found), reread)))
    return found


def _within_calendar(matches: Iterable[Match]) -> Iterator[Match]:
    """A matcher's matches, up to one whose days leave the calendar: date arithmetic overflows
    before 0001-01-01 and after 9999-12-31 ("999 weeks ago" asked in the year 10), and a time
    word there names nothing rather than failing the search."""
    try:
        yield from matches
    except OverflowError:
        return


def _reread(text: str, start: int, end: int, day: dt.date) -> Days | None:
    """The window of the longest expression found at text[start:end] read as if asked on `day`."""
    at = [m for m in _found(text[start:end], day) if m[0] == 0]
    return max(at, key=lambda m: m[1])[2] if at else None


def named_windows(text: str, as_of: float) -> list[tuple[float, float]]:
    """Every window the time expressions of `text` name, read against `as_of` (epoch seconds,
    whole UTC days, inclusive): a memory's "last Friday" is the Friday before it was written."""
    today = _day_of(as_of)
    if today is None:
        return []
    return [
        (day_range(first)[0], day_range(last)[1])
        for _, _, (first, last) in _found(text[:MAX_CHARS].lower(), today)
    ]


def read_time_words(text: str, as_of: float) -> TimeIntent | None:
    """The time the question names, read against `as_of` (see the module docstring)."""
    today = _day_of(as_of)
    if today is None:
        # Nothing can be read against it: not a window, and not an order either, since the
        # words of a window it would have found ("the day before yesterday") must not order.
        return None
    head = text[:MAX_CHARS].lower()
    found = _found(head, today)
    phrase = since = until = reach = None
    rest = head
    if found:
        primary = min(range(len(found)), key=lambda i: (found[i][0], found[i][0] - found[i][1]))
        span = widen(head, found, primary, today, functools.partial(_reread, head))
        start, end, (first, last) = span.start, span.end, span.days
        phrase = head[start:end].strip()
        since, until = day_range(first)[0], day_range(last)[1]
        reach = OPEN_REACH_DAYS * SECONDS_PER_DAY if span.open else None
        # A word inside the phrase does not order: "the day before yesterday" asks for a day.
        rest = head[:start] + " " * (end - start) + head[end:]
    order: Order | None = None
    order_phrase = None
    for name, pattern in _ORDERS:
        hit = pattern.search(rest)
        if hit is not None:
            order, order_phrase = ("earliest" if name == "earliest" else "latest"), hit.group(0)
            break
    if phrase is None and order is None:
        return None
    return TimeIntent(phrase, since, until, order, order_phrase, reach)


def window_days(intent: TimeIntent) -> float:
    """How many days the intent's window spans (0 without a window)."""
    if intent.since is None or intent.until is None:
        return 0.0
    return (intent.until - intent.since + 1) / SECONDS_PER_DAY
