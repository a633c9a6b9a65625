"""Domain: the time words that name a month, or a part of one ("in March", "last March",
"17 Nov 2026", "from March to May", "the last week of October"), and how counts are written.

Part of the reader in time_words.py, which runs these matchers beside its others: each yields
`(start, end, days)` for its matches in the lower-cased question.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable
from typing import Final, TypeAlias

from memlane.domain.calendar_days import Days, latest_date, month_of
from memlane.domain.time_patterns import HAN_NUMBERS, MONTH_DATES, MONTH_RANGES, WEEK_OF_MONTH_DATE
from memlane.domain.time_words_tables import (
    AMBIGUOUS_MONTHS,
    MONTHS,
    NUMBERS,
    ORDINAL_WORDS,
    WEEK_OF_MONTH,
    WEEKEND_WORDS,
)

Match: TypeAlias = tuple[int, int, Days]
Matcher: TypeAlias = Callable[[str, dt.date], Iterable[Match]]

_MONTH_RES: Final = tuple(re.compile(p) for p in MONTH_DATES)
_MONTH_RANGE_RES: Final = tuple(re.compile(p) for p in MONTH_RANGES)
_WEEK_OF_MONTH_RE: Final = re.compile(WEEK_OF_MONTH_DATE)


def number_word(word: str) -> int | None:
    """A count written in digits, as a word ("two", "zwei") or in Han numerals (十一)."""
    if word.isdigit():
        return int(word)
    if word in NUMBERS:
        return NUMBERS[word]
    # 十一 .. 九十九 in Han numerals
    if word and all(c in HAN_NUMBERS for c in word) and "十" in word:
        tens, _, ones = word.partition("十")
        return (NUMBERS.get(tens, 1) if tens else 1) * 10 + (NUMBERS.get(ones, 0) if ones else 0)
    return None


def _day_number(word: str) -> int:
    """A day of the month in digits or as an ordinal word ("fourth")."""
    return int(word) if word.isdigit() else ORDINAL_WORDS[word]


def month_number(word: str) -> int | None:
    """A month written as a number or a name (in any language of the tables)."""
    if word.isdigit():
        return int(word)
    return MONTHS.get(word, number_word(word))


def months_named(text: str, today: dt.date) -> Iterable[Match]:
    for pattern in _MONTH_RES:
        for found in pattern.finditer(text):
            groups = found.groupdict()
            name = groups["m"]
            day = _day_number(groups["d"]) if groups.get("d") else None
            year = int(groups["y"]) if groups.get("y") else None
            pre = (groups.get("pre") or "").split()
            if name in AMBIGUOUS_MONTHS and not (pre or day or year):
                continue  # "May I ask", "march forward"
            if pre == ["de"] and not (day or year):
                continue  # "Rio de Janeiro": a bare "de" makes a month only with a day or year
            days = _month_date(today, MONTHS[name], day, year, _MONTH_SIDE.get(" ".join(pre)))
            if days is not None:
                yield found.start(), found.end(), days


# Words before a month that say which occurrence it is ("last March", "el pasado marzo").
_MONTH_SIDE: Final = {
    "this": "this", "next": "next", "last": "last", "letzten": "last", "el pasado": "last",
}  # fmt: skip


def _month_date(
    today: dt.date, month: int, day: int | None, year: int | None, pre: str | None
) -> Days | None:
    """A named month (or day of it): in `year`, else "this March" this year's, "next March"
    the first after today, "last March" the latest before today (asked in March, a year ago)
    and otherwise the latest up to today."""
    if year is not None or pre not in ("this", "next", "last"):
        return latest_date(today, month, day, year)
    if pre == "this":
        return latest_date(today, month, day, today.year)
    if pre == "next":
        for ahead in range(today.year, today.year + 9):  # the first after today (leap days too)
            later = latest_date(today, month, day, ahead)
            if later is not None and later[0] > today:
                return later
        return None
    days = latest_date(today, month, day, None)
    if days is not None and days[1] >= today:  # "last": the latest up to the year before's end
        before = days[0].year - 1
        return latest_date(dt.date(before, 12, 31), month, day, None) if before >= 1 else None
    return days


def month_ranges(text: str, today: dt.date) -> Iterable[Match]:
    for pattern in _MONTH_RANGE_RES:
        for found in pattern.finditer(text):
            first, last = month_number(found["m1"]), month_number(found["m2"])
            if first is None or last is None or not (1 <= first <= 12 and 1 <= last <= 12):
                continue
            end = latest_date(today, last, None, int(found["y2"]) if found["y2"] else None)
            if end is None:
                continue
            # No year on the first month: the one that starts the range ending at `end`.
            start_year = end[1].year if first <= last else end[1].year - 1
            start = month_of(int(found["y1"]) if found["y1"] else start_year, first)
            if start is not None and start[0] <= end[1]:
                yield found.start(), found.end(), (start[0], end[1])


def _nth_saturday(first: dt.date, last: dt.date, nth: int) -> dt.date | None:
    """The month's nth Saturday (nth < 0: its last), None past the month's end."""
    if nth < 0:
        return last - dt.timedelta(days=(last.weekday() - 5) % 7)
    saturday = first + dt.timedelta(days=(5 - first.weekday()) % 7 + 7 * (nth - 1))
    return saturday if saturday <= last else None


def weeks_of_month(text: str, today: dt.date) -> Iterable[Match]:
    for found in _WEEK_OF_MONTH_RE.finditer(text):
        year = int(found.group("y")) if found.group("y") else None
        month = latest_date(today, MONTHS[found.group("m")], None, year)
        if month is None:
            continue
        first, last = month
        nth = WEEK_OF_MONTH[found.group("o")]
        if found.group("k") in WEEKEND_WORDS:
            saturday = _nth_saturday(first, last, nth)
            if saturday is not None:
                yield found.start(), found.end(), (saturday, saturday + dt.timedelta(days=1))
            continue
        if nth < 0:
            first = last - dt.timedelta(days=6)
        else:
            first = first + dt.timedelta(weeks=nth - 1)
            last = min(last, first + dt.timedelta(days=6))
        yield found.start(), found.end(), (first, last)
