"""Domain: the ends of a `since` / `until` filter as callers write them, to epoch seconds.

Accepted: an ISO 8601 date (`2026-11-01`: from its first second for `since`, to its last for
`until`; whole UTC days), month (`2026-11`) or week (`2026-W47`: Monday to Sunday) taken whole
the same way, a date and time (UTC unless it names a zone), epoch seconds (a number, or text of
nine digits or more; a whole number from 1000 to 9999 is refused, as a year meant), a
`datetime` / `date`, or a span back from now (`7d`, `12h`, `30m` minutes,
`2w`, `3mo` months, `1y`). `now` is passed in: the search passes its `as_of` when it has one, so
`--since 7d --as-of 2026-11-20` is the week before that day (and, with no `until`, the search
ends the window there: `is_span`). A time outside the years 1 to 9999
is refused, whichever way it is written (a date there cannot be written at all).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Final, TypeAlias

from memlane.domain.calendar_days import Days, month_of
from memlane.domain.chunk_times import day_range
from memlane.domain.errors import InvalidQuery

# What callers may pass for since / until / as_of.
TimeInput: TypeAlias = str | float | dt.datetime | dt.date | None

_SPAN: Final = re.compile(r"(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|d|w|mo|y)", re.IGNORECASE)
_SECONDS: Final = {
    "s": 1,
    "sec": 1,
    "m": 60,
    "min": 60,
    "h": 3_600,
    "d": 86_400,
    "w": 7 * 86_400,
    "mo": 30 * 86_400,
    "y": 365 * 86_400,
}
_DATE_ONLY: Final = re.compile(r"\d{4}-\d{2}-\d{2}")
_MONTH_ONLY: Final = re.compile(r"(\d{4})-(\d{2})")
# 2026-W47, 2026W47, 2026-W47-3 (its Wednesday): datetime.fromisoformat reads a week as its
# Monday's midnight, which would end an `until` week on its first second.
_ISO_WEEK: Final = re.compile(r"(\d{4})-?W(\d{2})(?:-?([1-7]))?", re.IGNORECASE)
# Epoch seconds written as text (a command line, a URL): nine digits or more, i.e. from 1973 on.
# A shorter bare number is refused rather than read: "2026" is far likelier a year than 33
# minutes past the epoch.
_EPOCH_TEXT: Final = re.compile(r"\d{9,}(?:\.\d+)?")
_BARE_NUMBER: Final = re.compile(r"[+-]?\d+(?:\.\d+)?")
# The calendar's first and last second (datetime's years 1 to 9999), as epoch seconds.
_FIRST: Final = dt.datetime(1, 1, 1, tzinfo=dt.UTC).timestamp()
_LAST: Final = dt.datetime(9999, 12, 31, 23, 59, 59, tzinfo=dt.UTC).timestamp()


def _aware(moment: dt.datetime) -> float:
    return (moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)).timestamp()


def parse_time_bound(value: object, *, now: float, end: bool, name: str) -> float | None:
    """Epoch seconds of one end of a time filter (None: open); InvalidQuery when unreadable.

    `end` says which end a bare date stands for (its last second for `until`).
    """
    seconds = _seconds(value, now=now, end=end, name=name)
    if seconds is not None and not _FIRST <= seconds <= _LAST:
        # Read as given, 1e20 matched nothing and the search answered "no results".
        hint = ""
        if abs(seconds) >= 1e12 and _FIRST <= seconds / 1_000 <= _LAST:  # 2001 on, in ms
            hint = f" (as epoch milliseconds it would be {seconds / 1_000:.0f} seconds)"
        raise InvalidQuery(f"{name}: {value!r} is outside the years 1 to 9999{hint}")
    return seconds


def is_span(value: object) -> bool:
    """Whether `value` is a span back from now (`7d`): with an `as_of`, a window that ends
    then (the week before that day, not the week before and everything after it)."""
    return isinstance(value, str) and _SPAN.fullmatch(value.strip()) is not None


def _seconds(value: object, *, now: float, end: bool, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise InvalidQuery(f"{name} must be a time, not {value!r}")
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise InvalidQuery(f"{name} must be a finite time")
        if value == int(value) and 1_000 <= value <= 9_999:
            # Read as epoch seconds, 2026 is 1970-01-01T00:33:46: a filter that keeps
            # everything and says nothing. A year is far likelier meant.
            raise InvalidQuery(
                f"{name}: {value!r} is epoch seconds in 1970, not the year; write a year as a "
                "date (2026-01-01)"
            )
        return float(value)
    if isinstance(value, dt.datetime):
        return _aware(value)
    if isinstance(value, dt.date):
        first, last = day_range(value)
        return last if end else first
    if not isinstance(value, str):
        raise InvalidQuery(f"{name} must be a time, not {type(value).__name__}")
    text = value.strip()
    if _EPOCH_TEXT.fullmatch(text):
        return float(text)
    if _BARE_NUMBER.fullmatch(text):
        raise InvalidQuery(
            f"{name}: {value!r} is too small for epoch seconds (nine digits or more); write a "
            "year as a date (2026-01-01) or a span with its unit (7d)"
        )
    span = _SPAN.fullmatch(text)
    if span is not None:
        return now - float(span.group(1)) * _SECONDS[span.group(2).lower()]
    try:
        days = _whole_days(text)
        if days is not None:
            return day_range(days[1])[1] if end else day_range(days[0])[0]
        return _aware(dt.datetime.fromisoformat(text.replace("Z", "+00:00")))
    except ValueError:
        raise InvalidQuery(
            f"{name}: {value!r} is not a time (an ISO 8601 date, month, week or date and time, "
            "epoch seconds, or a span back from now such as 7d, 12h, 30m (minutes), 2w, 3mo "
            "(months))"
        ) from None


def _whole_days(text: str) -> Days | None:
    """The days a date, month or ISO week names (ValueError when it is no such day), None
    when `text` is none of these."""
    if _DATE_ONLY.fullmatch(text):
        day = dt.date.fromisoformat(text)
        return day, day
    month = _MONTH_ONLY.fullmatch(text)
    if month is not None:
        days = month_of(int(month.group(1)), int(month.group(2)))
        if days is None:
            raise ValueError(text)
        return days
    week = _ISO_WEEK.fullmatch(text)
    if week is None:
        return None
    year, number, weekday = week.groups()
    if weekday is not None:
        day = dt.date.fromisocalendar(int(year), int(number), int(weekday))
        return day, day
    monday = dt.date.fromisocalendar(int(year), int(number), 1)
    return monday, monday + min(dt.timedelta(days=6), dt.date.max - monday)
