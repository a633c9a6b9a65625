"""Domain: calendar arithmetic of the time-word reader (time_words.py), in whole UTC days.

Weeks run Monday to Sunday; every window is inclusive. No I/O, no clock: "today" is passed in.
"""

from __future__ import annotations

import calendar
import datetime as dt
from typing import TypeAlias

Days: TypeAlias = tuple[dt.date, dt.date]  # inclusive


def week_of(day: dt.date) -> Days:
    monday = day - dt.timedelta(days=day.weekday())
    return monday, monday + dt.timedelta(days=6)


def month_of(year: int, month: int) -> Days | None:
    """The month's first and last day; None outside the calendar (years 1 to 9999)."""
    if not (1 <= year <= 9999 and 1 <= month <= 12):
        return None
    last = calendar.monthrange(year, month)[1]
    return dt.date(year, month, 1), dt.date(year, month, last)


def shift_month(day: dt.date, months: int) -> tuple[int, int]:
    index = day.year * 12 + day.month - 1 + months
    return index // 12, index % 12 + 1


def unit_back(today: dt.date, unit: str, count: int) -> Days | None:
    """The day / calendar week / month / year `count` units before today's (after, if < 0)."""
    if abs(count) > 1000:
        return None
    if unit == "day":
        day = today - dt.timedelta(days=count)
        return day, day
    if unit == "week":
        return week_of(today - dt.timedelta(weeks=count))
    if unit == "month":
        return month_of(*shift_month(today, -count))
    if not 1 <= today.year - count <= 9999:
        return None
    return dt.date(today.year - count, 1, 1), dt.date(today.year - count, 12, 31)


def recent_days(today: dt.date, unit: str, count: int) -> Days | None:
    """From `count` units ago up to today ("in the last 3 weeks")."""
    start = unit_back(today, unit, count)
    if start is None:
        return None
    first = today - dt.timedelta(days=count) if unit == "day" else start[0]
    if unit == "week":
        first = today - dt.timedelta(weeks=count)
    return first, today


def calendar_day(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def latest_date(today: dt.date, month: int, day: int | None, year: int | None) -> Days | None:
    """The named month (or day of it), in `year` or else its latest occurrence up to today."""
    if not 1 <= month <= 12:
        return None
    if year is not None:
        if day is None:
            return month_of(year, month)
        found = calendar_day(year, month, day)
        return None if found is None else (found, found)
    year = today.year if (month, day or 1) <= (today.month, today.day) else today.year - 1
    if day is None:
        return month_of(year, month)
    # February 29 asked in a common year is the last leap day (at most 8 years back, as from
    # 1904 to 1896 past 1900); a day no year has (April 31) is none.
    for back in range(9):
        found = calendar_day(year - back, month, day)
        if found is not None:
            return found, found
    return None


def latest_day_of_month(today: dt.date, day: int) -> dt.date | None:
    """The latest day numbered `day` up to today ("the 31st" asked on 5 December is 31
    October: November has no 31st)."""
    back = 1 if day > today.day else 0
    for months in range(back, back + 12):
        found = calendar_day(*shift_month(today, -months), day)
        if found is not None:
            return found
    return None


def holiday(rule: tuple[int, int] | str, year: int) -> dt.date | None:
    """A holiday's date in `year`: a fixed (month, day), "easter" or "thanksgiving"."""
    if not 1 <= year <= 9999:
        return None
    if isinstance(rule, tuple):
        return calendar_day(year, *rule)
    if rule == "thanksgiving":  # the fourth Thursday of November
        first = dt.date(year, 11, 1)
        return first + dt.timedelta(days=(3 - first.weekday()) % 7 + 21)
    if rule == "easter":  # Western Easter Sunday: the anonymous Gregorian computus
        a, b, c = year % 19, year // 100, year % 100
        d, e = b // 4, b % 4
        g = (b - (b + 8) // 25 + 1) // 3
        h = (19 * a + b - d - g + 15) % 30
        i, k = c // 4, c % 4
        weekday = (32 + 2 * e + 2 * i - h - k) % 7
        m = (a + 11 * h + 22 * weekday) // 451
        month, day = divmod(h + weekday - 7 * m + 114, 31)
        return dt.date(year, month, day + 1)
    return None


def holiday_near(rule: tuple[int, int] | str, today: dt.date, which: str | None) -> dt.date | None:
    """The holiday's occurrence a question means: "next" the first after today, "this" this
    year's, "last" the latest before today (asked on Christmas Day, last year's), bare the
    latest up to today."""
    if which == "this":
        return holiday(rule, today.year)
    if which == "next":
        for year in (today.year, today.year + 1):
            found = holiday(rule, year)
            if found is not None and found > today:
                return found
        return None
    for year in (today.year, today.year - 1):
        found = holiday(rule, year)
        if found is not None and (found < today or (found == today and which != "last")):
            return found
    return None
