"""Domain: a time named relative to a date the same text names, read against that date.

"Last Friday on 23 January, 2022", "the Sunday before October 25, 2022", "two weeks before
August 11, 2023", "last week, as mentioned on November 6, 2023": the reader (time_words.py)
found each expression alone and read the relative one against the day the question is asked,
a year or more away from the date beside it. Here the two become one expression whose window
is read against the date:

- a counted unit or a weekday before / after the date: "the week before D" is the seven days
  before it, "two weeks before D" the calendar week two weeks back from it, "the day after D"
  the day after, "the Saturday after D" the first Saturday after it;
- any other relative expression joined to the date by "on", "before", "as of", "as mentioned
  on" or a comma is read as if asked on that date ("last weekend before April 10, 2023" is the
  weekend just before it);
- in Chinese, Japanese and Korean, a count or "the day before / after" following the date:
  "2023年8月11日の2週間前", "2023년 8월 11일 2주 전", "2023年5月4日的前一天".

The date must carry its year (otherwise it is relative itself) and name one day. The window
also takes in the date itself: what happened "the week before August 3" is often written on
August 3 ("last week we ..."), and a plan for "the Saturday after October 28" on October 28
(LoCoMo: without the date, these two questions lost their answer line from the first five lines
read, and one of them its answer session from the first five hits).
Pure.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from typing import Final

from memlane.domain.calendar_days import Days, month_of, shift_month, unit_back
from memlane.domain.time_month_words import Match, number_word
from memlane.domain.time_patterns import HAN_NUMBERS, LATIN_UNITS, NUMBER_WORD, alternation
from memlane.domain.time_spans import Reread
from memlane.domain.time_words_tables import UNITS, WEEKDAYS

_LATIN_WEEKDAYS: Final = {w: d for w, d in WEEKDAYS.items() if w.isascii()}
_YEAR: Final = re.compile(r"(?<!\d)\d{4}(?!\d)")
# "the week before", "two weeks after", "the Sunday before", right before the date.
_UNIT_BEFORE: Final = re.compile(
    rf"(?<![\w'])(?:(?P<n>{NUMBER_WORD})\s+(?P<u>{LATIN_UNITS})"
    rf"|(?:(?:on|in|during)\s+)?(?:the\s+)?(?P<one>day|night|week|weekend|month|year"
    rf"|{alternation(_LATIN_WEEKDAYS)}))"
    r"\s+(?P<side>before|prior\s+to|after|following)\s+(?:(?:on\s+)?the\s+)?$"
)
# Chinese, Japanese and Korean say it after the date: "2023年8月11日の2週間前", "2023년 8월
# 11일 2주 전", "2023年5月4日的前一天", "2023년 5월 4일 다음날" (not "…日前两周": the count
# before its unit only).
# The unit words of Chinese, Japanese and Korean; not a bare 月 ("2月前" is February too).
_CJK_UNITS: Final = {u: unit for u, unit in UNITS.items() if u[0] >= "\u2e80" and u != "月"}
_CJK_BEFORE: Final = ("前", "以前", "之前", "전")
_CJK_AFTER: Final = ("後", "后", "以後", "以后", "之后", "之後", "후")
_CJK_DAY_BEFORE: Final = ("前日", "前一天", "전날")
_CJK_DAY_AFTER: Final = (
    "翌日", "次の日", "第二天", "后一天", "後一天", "다음날", "다음 날", "이튿날",
)  # fmt: skip
_AFTER_DATE: Final = re.compile(
    rf"\s*(?:の|的)?\s*(?:(?P<n>\d{{1,3}}|[{HAN_NUMBERS}]{{1,3}}|한|두|세|네|다섯)\s*"
    rf"(?P<u>{alternation(_CJK_UNITS)})\s*(?P<side>{alternation(_CJK_BEFORE + _CJK_AFTER)})"
    rf"|(?P<one>{alternation(_CJK_DAY_BEFORE + _CJK_DAY_AFTER)}))"
)
# What may join a relative expression to the date it is read against.
_LINK: Final = re.compile(
    r"[\s,]*(?:(?:as\s+)?(?:mentioned|said|noted|discussed|shared|written|reported)\s+)?"
    r"(?:on|before|prior\s+to|as\s+of)?[\s,]*(?:the\s+)?"
)


def anchored(text: str, found: Sequence[Match], reread: Reread) -> Iterable[Match]:
    """The expressions of `text` read against a dated day after them (see the module
    docstring). `found` holds the reader's matches; `reread(start, end, day)` reads the
    expression at text[start:end] as if asked on `day`."""
    for date_start, date_end, (first, last) in found:
        if first != last or _YEAR.search(text, date_start, date_end) is None:
            continue
        unit = _UNIT_BEFORE.search(text, 0, date_start)
        if unit is not None:
            days = _unit_beside(unit, first)
            if days is not None:
                yield unit.start(), date_end, _with_day(days, first)
        suffix = _AFTER_DATE.match(text, date_end)
        if suffix is not None:
            days = _unit_after(suffix, first)
            if days is not None:
                yield date_start, suffix.end(), _with_day(days, first)
        for start, end, _ in found:
            if end > date_start or _LINK.fullmatch(text, end, date_start) is None:
                continue
            days = reread(start, end, first)
            if days is not None and days != (first, last):
                yield start, date_end, _with_day(days, first)


def _with_day(days: Days, day: dt.date) -> Days:
    """The window stretched to take in the dated day (see the module docstring)."""
    return min(days[0], day), max(days[1], day)


def _unit_after(found: re.Match[str], day: dt.date) -> Days | None:
    """The window a Chinese, Japanese or Korean count after the date names."""
    if found["one"] is not None:
        named = day + dt.timedelta(days=-1 if found["one"] in _CJK_DAY_BEFORE else 1)
        return named, named
    count = number_word(found["n"])
    if count is None:
        return None
    before = found["side"] in _CJK_BEFORE
    return unit_back(day, _CJK_UNITS[found["u"]], count if before else -count)


def _unit_beside(found: re.Match[str], day: dt.date) -> Days | None:
    after = found["side"] in ("after", "following")
    one = found["one"]
    if one is None:
        count = number_word(found["n"])
        if count is None:
            return None
        return unit_back(day, UNITS[found["u"]], -count if after else count)
    step = 1 if after else -1
    if one in _LATIN_WEEKDAYS:  # its first occurrence after the day, or its last before
        weekday = _LATIN_WEEKDAYS[one]
        gap = ((weekday - day.weekday()) if after else (day.weekday() - weekday)) % 7 or 7
        named = day + dt.timedelta(days=step * gap)
        return named, named
    if one in ("day", "night"):
        named = day + dt.timedelta(days=step)
        return named, named
    if one == "week":  # the seven days after or before it
        near, far = day + dt.timedelta(days=step), day + dt.timedelta(days=7 * step)
        return (near, far) if after else (far, near)
    if one == "weekend":
        if after:
            saturday = day + dt.timedelta(days=(5 - day.weekday()) % 7 or 7)
        else:  # the last Saturday and Sunday both before the day
            saturday = day - dt.timedelta(days=(day.weekday() - 5) % 7 or 7)
            if saturday + dt.timedelta(days=1) >= day:
                saturday -= dt.timedelta(weeks=1)
        return saturday, saturday + dt.timedelta(days=1)
    if one == "month":
        return month_of(*shift_month(day, step))
    return unit_back(day, "year", -step)
