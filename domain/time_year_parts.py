"""Domain: time words that name a part of a year: a season ("last summer", "去年夏天", "el
verano pasado"), a month of a year named from now ("in December last year", "去年3月", "올해
3월"), and a third of a year ("early 2025", "mid-2025", "the end of last year").

Part of the reader in time_words.py, which runs these matchers beside its others; where one of
them starts where another expression does ("去年" alone, "in december" alone), its longer match
wins there. Seasons are the northern hemisphere's meteorological ones (spring March to May,
summer June to August, autumn September to November, winter December to February); a year's
winter is the one that starts in its December. A third of a year is four months. Pure: no I/O,
no clock.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from typing import Final

from memlane.domain.calendar_days import Days, latest_date, month_of, shift_month
from memlane.domain.time_month_words import Match, month_number
from memlane.domain.time_patterns import alternation, bounded
from memlane.domain.time_words_tables import AMBIGUOUS_MONTHS, MONTHS
from memlane.domain.time_year_words import (
    CJK_SEASON_BEFORE,
    CJK_SEASONS,
    CJK_YEARS_FROM_NOW,
    SEASON_AFTER,
    SEASON_BEFORE,
    SEASONS,
    YEAR_AFTER_MONTH,
    YEAR_THIRDS,
    YEARS_FROM_NOW,
)

# Not a season: "this Spring Boot app", "a spring roll"; after a CJK season character, 春节 is
# the New Year and 秋葉原 a place (冬至, the solstice, is in winter).
_NOT_SPRING: Final = (
    "boot", "framework", "cloud", "batch", "security", "data", "mvc", "roll", "rolls", "water",
    "onion", "onions", "mattress",
)  # fmt: skip
_LATIN_SEASONS: Final = alternation(SEASONS)
_SEASON_RES: Final = (
    # last summer, el próximo verano, cet été
    re.compile(
        # a possessive still names it ("last summer's trip"); a longer word does not
        rf"(?<![\w'])(?P<pre>{alternation(SEASON_BEFORE)})\s+(?P<s>{_LATIN_SEASONS})"
        rf"(?![\w-])(?!'(?!s(?!\w)))"
        rf"(?!\s+(?:{alternation(_NOT_SPRING)})(?!\w))"
        rf"(?:\s+(?:of\s+|de\s+|del\s+|do\s+)?(?P<y>(?:19|20)\d{{2}})(?!\w|[-/.]\d))?"
    ),
    # el verano pasado, l'été dernier, o inverno passado
    re.compile(
        rf"(?<![\w'])(?:(?:el|la|o|a|le)\s+|l')?(?P<s>{_LATIN_SEASONS})\s+"
        rf"(?P<post>{alternation(SEASON_AFTER)})(?![\w'])"
    ),
    # the summer of 2025, fall 2025, été 2025, Sommer 2025
    re.compile(
        rf"(?<![\w'])(?:the\s+)?(?P<s>{_LATIN_SEASONS})\s+(?:of\s+|de\s+|del\s+|do\s+)?"
        rf"(?P<y>(?:19|20)\d{{2}})(?!\w|[-/.]\d)"
    ),
    # 去年夏天, この夏, 작년 여름, 2025年の夏, 2025년 여름
    re.compile(
        # not inside a Korean word: 내려올 겨울 ("the winter that will come") holds 올 겨울
        rf"(?<![\uac00-\ud7a3])(?:(?P<cjk>{bounded(CJK_SEASON_BEFORE)})"
        rf"|(?<!\d)(?P<y>(?:19|20)\d{{2}})\s*[年년])"
        rf"\s*(?:的|の)?\s*(?P<s>{alternation(CJK_SEASONS)})(?![节節葉目日木])"
    ),
)
_MONTH_YEAR_RES: Final = (
    # in December last year, March of this year, marzo del año pasado
    re.compile(
        rf"(?<![\w'])(?:(?P<pre>in|during|since|until|by|en|em|im|seit|bis|desde|depuis)\s+)?"
        rf"(?P<m>{alternation(MONTHS)})(?![\w'])\s*,?\s+(?P<r>{alternation(YEAR_AFTER_MONTH)})"
        rf"(?![\w'])"
    ),
    # last year in May, this year in March
    re.compile(
        rf"(?<![\w'])(?P<r>{alternation(YEARS_FROM_NOW)}),?\s+in\s+(?P<m>{alternation(MONTHS)})"
        rf"(?![\w'])"
    ),
    # 去年3月, 今年三月, 去年の3月15日, 올해 3월
    re.compile(
        rf"(?P<r>{bounded(CJK_YEARS_FROM_NOW)})\s*(?:的|の)?\s*"
        r"(?P<m>1[0-2]|0?[1-9]|十一|十二|[一二三四五六七八九十])\s*[月월]"
        r"(?:\s*(?P<d>\d{1,2})\s*[日号號일])?"
    ),
)
_THIRD_RE: Final = re.compile(
    rf"(?<![\w'])(?P<t>{alternation(YEAR_THIRDS)})(?:\s+|-)"
    rf"(?P<y>(?:19|20)\d{{2}}|{alternation(YEARS_FROM_NOW)})(?!\w|[-/.]\d)"
)


def season_of(year: int, first_month: int) -> Days | None:
    """The season that starts in `first_month` of `year` (winter runs into the next year)."""
    start = month_of(year, first_month)
    if start is None:
        return None
    end = month_of(*shift_month(start[0], 2))
    return None if end is None else (start[0], end[1])


def season_near(today: dt.date, first_month: int, which: str) -> Days | None:
    """The season a question means: "next" the first to begin after today, "last" the latest
    over before it, "this" the one holding today (else this year's)."""
    seasons = [s for y in range(today.year - 2, today.year + 2) if (s := season_of(y, first_month))]
    if which == "next":
        return next((s for s in seasons if s[0] > today), None)
    if which == "last":
        return next((s for s in reversed(seasons) if s[1] < today), None)
    holding = [s for s in seasons if s[0] <= today <= s[1]]
    return holding[0] if holding else season_of(today.year, first_month)


def seasons_named(text: str, today: dt.date) -> Iterable[Match]:
    for pattern in _SEASON_RES:
        for found in pattern.finditer(text):
            groups = found.groupdict()
            name = groups["s"]
            first_month = SEASONS.get(name) or CJK_SEASONS[name]
            if groups.get("y"):
                days = season_of(int(groups["y"]), first_month)
            elif groups.get("cjk"):
                which = CJK_SEASON_BEFORE[groups["cjk"]]
                if isinstance(which, int):
                    days = season_of(today.year + which, first_month)
                else:
                    days = season_near(today, first_month, which)
            else:
                which = SEASON_BEFORE.get(groups.get("pre") or "") or SEASON_AFTER[groups["post"]]
                days = season_near(today, first_month, which)
            if days is not None:
                yield found.start(), found.end(), days


def months_of_named_years(text: str, today: dt.date) -> Iterable[Match]:
    for pattern in _MONTH_YEAR_RES:
        for found in pattern.finditer(text):
            groups = found.groupdict()
            name = groups["m"]
            if name in AMBIGUOUS_MONTHS and "pre" in groups and not groups["pre"]:
                continue  # "it may this year": before the year words, a month needs "in"
            month = month_number(name)
            offset = YEAR_AFTER_MONTH.get(groups["r"], CJK_YEARS_FROM_NOW.get(groups["r"], 0))
            day = int(groups["d"]) if groups.get("d") else None
            days = None if month is None else latest_date(today, month, day, today.year + offset)
            if days is not None:
                yield found.start(), found.end(), days


def year_thirds(text: str, today: dt.date) -> Iterable[Match]:
    for found in _THIRD_RE.finditer(text):
        year_word = found["y"]
        offset = YEARS_FROM_NOW.get(year_word)
        year = int(year_word) if offset is None else today.year + offset
        first = month_of(year, YEAR_THIRDS[found["t"]])
        last = month_of(year, YEAR_THIRDS[found["t"]] + 3)
        if first is not None and last is not None:
            yield found.start(), found.end(), (first[0], last[1])
