"""Domain: time words in a question ("last week", "in March", "昨天", "지난주"), read against when
it is asked.

`read_time_words(text, as_of)` returns the window the first time expression names (whole UTC
days) and whether the question asks for the earliest or the latest occurrence ("first time",
"most recent", "before ..."), or None when it holds no time word. Table-driven (the words are in
time_words_tables.py); no I/O, no clock: `as_of` (epoch seconds) is passed in. A window found
here only boosts hits (domain/time_boost.py); the strict filter is `since` / `until`.

Measured alternative: dateparser 1.5 (a maintained library) took 1.6 s on its first query and
~40 ms per query after, read "we", "May I ask" and "march forward" as dates and missed
"la semana pasada"; the domain may not import it anyway.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from memlane.domain.calendar_days import (
    Days,
    calendar_day,
    latest_date,
    recent_days,
    shift_month,
    unit_back,
    week_of,
)
from memlane.domain.chunk_times import SECONDS_PER_DAY, day_range
from memlane.domain.time_words_tables import (
    AFTER,
    AMBIGUOUS_MONTHS,
    BEFORE,
    COMING_WEEKDAY_PREFIXES,
    COMING_WEEKDAY_SUFFIXES,
    EARLIEST,
    LAST_WEEKDAY_PREFIXES,
    LAST_WEEKEND,
    LATEST,
    MONTH_PREPOSITIONS,
    MONTHS,
    NEXT_WEEKDAY_PREFIXES,
    NEXT_WEEKEND,
    NUMBERS,
    RECENT_PREFIXES,
    RELATIVE_UNITS,
    THIS_WEEKDAY_PREFIXES,
    THIS_WEEKEND,
    UNITS,
    WEEK_OF_LINKS,
    WEEK_OF_MONTH,
    WEEK_WORDS,
    WEEKDAYS,
)

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

    def describe(self) -> str:
        """`"last week" → 2026-11-09..2026-11-15; earliest ("first time")`, for --explain."""
        parts = []
        if self.phrase is not None and self.since is not None and self.until is not None:
            first = dt.datetime.fromtimestamp(self.since, tz=dt.UTC).date()
            last = dt.datetime.fromtimestamp(self.until, tz=dt.UTC).date()
            span = first.isoformat() if first == last else f"{first}..{last}"
            parts.append(f'"{self.phrase}" → {span}')
        if self.order is not None:
            parts.append(f'{self.order} ("{self.order_phrase}")')
        return "; ".join(parts)


def _alternation(words: Iterable[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True))


def _bounded(words: Iterable[str]) -> str:
    """Latin-script words need word edges; CJK and Hangul words attach to particles."""
    latin = [w for w in words if w[0].isascii() or w[0] in "áéíóúàâçêôãõüöäß'"]
    other = [w for w in words if w not in latin]
    pieces = []
    if latin:
        # A possessive ("Monday's") still names the day; a longer word does not.
        pieces.append(rf"(?<![\w'])(?:{_alternation(latin)})(?![\w-])(?!'(?!s(?!\w)))")
    if other:
        pieces.append(f"(?:{_alternation(other)})")
    return "|".join(pieces)


_HAN_NUMBERS: Final = "一两兩二三四五六七八九十"
_NUMBER: Final = rf"\d{{1,3}}|{_alternation(NUMBERS)}"
_LATIN_UNITS: Final = _alternation(u for u in UNITS if u.isascii() or u[0] in "díaé")
_AGO: Final = (
    # English, German, French, Spanish, Portuguese
    rf"(?<!\w)(?P<n>{_NUMBER})\s+(?P<u>{_LATIN_UNITS})\s+(?:ago|atrás)(?!\w)",
    rf"(?<!\w)(?:hace|há|vor|il y a)\s+(?P<n>{_NUMBER})\s+(?P<u>{_LATIN_UNITS})(?!\w)",
    # Chinese and Japanese: 三天前, 两个星期前, 3か月前, 2年前
    rf"(?P<n>\d{{1,3}}|[{_HAN_NUMBERS}]{{1,3}})\s*(?P<u>天|周|週間|週|个星期|個星期|星期|个月|個月"
    r"|か月|ヶ月|ヵ月|カ月|年|日)\s*(?:以)?前",
    # Korean: 3일 전, 두 달 전, 2주 전
    r"(?P<n>\d{1,3}|한|두|세|네|다섯)\s*(?P<u>일|주일|주|달|개월|년)\s*전",
)
_RECENT: Final = (
    rf"(?<!\w)(?:{_alternation(RECENT_PREFIXES)})\s+(?P<n>{_NUMBER})\s+(?P<u>{_LATIN_UNITS})(?!\w)",
    rf"(?:最近|过去|過去)\s*(?P<n>\d{{1,3}}|[{_HAN_NUMBERS}]{{1,3}})\s*(?P<u>天|周|个星期|個星期|个月"
    r"|個月|日|週間|か月|ヶ月|年)",
    r"지난\s*(?P<n>\d{1,3})\s*(?P<u>일|주|개월|년)(?!\s*전)",
)
_MONTH_WORDS: Final = _alternation(MONTHS)
_ORDINAL: Final = r"(?:st|nd|rd|th|º|°|er|\.)?"
_MONTH_DATES: Final = (
    # March 17, March 17th 2026, March 2026, March
    rf"(?<![\w'])(?P<pre>(?:{_alternation(MONTH_PREPOSITIONS)})\s+(?:de\s+)?)?(?P<m>{_MONTH_WORDS})"
    rf"(?![\w'])\.?(?:\s+(?P<d>\d{{1,2}}){_ORDINAL}(?!\d))?(?:,?\s+(?:de\s+)?(?P<y>\d{{4}}))?",
    # 17 March, 17. März 2026, 17 de marzo de 2026
    rf"(?<!\w)(?P<d>\d{{1,2}}){_ORDINAL}\s+(?:de\s+)?(?P<m>{_MONTH_WORDS})(?![\w'])"
    rf"(?:,?\s+(?:de\s+)?(?P<y>\d{{4}}))?",
)
_WEEK_OF_MONTH: Final = (
    rf"(?<![\w'])(?:(?:the|la|a|die|der)\s+)?(?P<o>{_alternation(WEEK_OF_MONTH)})\s+"
    rf"(?:{_alternation(WEEK_WORDS)})\s+(?:{_alternation(WEEK_OF_LINKS)})\s+(?P<m>{_MONTH_WORDS})"
    rf"(?![\w'])(?:,?\s+(?:de\s+)?(?P<y>\d{{4}}))?"
)
_CJK_DATE: Final = (
    rf"(?:(?P<y>\d{{4}})\s*[年년]\s*)?(?P<m>1[0-2]|0?[1-9]|十一|十二|[{_HAN_NUMBERS}])\s*[月월]"
    r"(?:\s*(?P<d>\d{1,2})\s*[日号號일])?"
)
_ISO_DATE: Final = r"(?<!\d)(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})(?!\d)"
_YEAR: Final = (
    r"(?<!\w)(?:in|during|since|en|em|im jahr|im|seit|durante)\s+(?P<y>(?:19|20)\d{2})(?!\w)",
    r"(?P<y>(?:19|20)\d{2})\s*[年년](?!\s*\d)",
)
_DAY_OF_MONTH: Final = (
    r"(?<!\w)(?:on\s+)?the\s+(?P<d>\d{1,2})(?:st|nd|rd|th)(?!\w)",
    r"(?<!\w)(?:el\s+)?día\s+(?P<d>\d{1,2})(?!\d)",
    r"(?<!\w)(?:no\s+)?dia\s+(?P<d>\d{1,2})(?!\d)",
    r"(?<!\w)am\s+(?P<d>\d{1,2})\.(?!\d)",
    r"(?<![\d月월])(?P<d>\d{1,2})\s*[号號](?!\w)",
    # not a span: 3日間 / 3日后 (three days), 1日中 (all day), 1日あたり / 1日分 (per / a day's)
    r"(?<![\d月월])(?P<d>\d{1,2})日(?![前間间後后中分]|あたり|当たり|おき|ぶり|以内|以上|程度|ほど)",
    r"(?<![\d월])(?P<d>\d{1,2})일(?!\s*(?:전|동안|간|째))",
)
_WEEKDAY: Final = (
    rf"(?:(?P<last>{_alternation(LAST_WEEKDAY_PREFIXES)})|(?P<next>{_alternation(NEXT_WEEKDAY_PREFIXES)})"
    rf"|(?P<coming>(?<![\w'])(?:{_alternation(COMING_WEEKDAY_PREFIXES)}))"
    rf"|(?P<this>(?<![\w'])(?:{_alternation(THIS_WEEKDAY_PREFIXES)})))?"
    rf"(?P<w>{_bounded(WEEKDAYS)})(?P<after>{_alternation(COMING_WEEKDAY_SUFFIXES)})?"
)


def _number(word: str) -> int | None:
    if word.isdigit():
        return int(word)
    if word in NUMBERS:
        return NUMBERS[word]
    # 十一 .. 九十九 in Han numerals
    if word and all(c in _HAN_NUMBERS for c in word) and "十" in word:
        tens, _, ones = word.partition("十")
        return (NUMBERS.get(tens, 1) if tens else 1) * 10 + (NUMBERS.get(ones, 0) if ones else 0)
    return None


def _month_number(word: str) -> int | None:
    if word.isdigit():
        return int(word)
    return MONTHS.get(word, _number(word))


# --- matchers: each yields (start, end, days) for its matches in the lower-cased text ----------

Match: TypeAlias = tuple[int, int, Days]
Matcher: TypeAlias = Callable[[str, dt.date], Iterable[Match]]


def _relative(text: str, today: dt.date) -> Iterable[Match]:
    for found in _RELATIVE_RE.finditer(text):
        unit, offset = RELATIVE_UNITS[found.group(0)]
        days = unit_back(today, unit, -offset)
        if days is not None:
            yield found.start(), found.end(), days


def _counted(patterns: Sequence[re.Pattern[str]], back: bool) -> Matcher:
    def matcher(text: str, today: dt.date) -> Iterable[Match]:
        for pattern in patterns:
            for found in pattern.finditer(text):
                count = _number(found.group("n"))
                unit = UNITS[found.group("u")]
                if count is None:
                    continue
                days = unit_back(today, unit, count) if back else recent_days(today, unit, count)
                if days is not None:
                    yield found.start(), found.end(), days

    return matcher


def _months(text: str, today: dt.date) -> Iterable[Match]:
    for pattern in _MONTH_RES:
        for found in pattern.finditer(text):
            groups = found.groupdict()
            name = groups["m"]
            day = int(groups["d"]) if groups.get("d") else None
            year = int(groups["y"]) if groups.get("y") else None
            pre = (groups.get("pre") or "").split()
            if name in AMBIGUOUS_MONTHS and not (pre or day or year):
                continue  # "May I ask", "march forward"
            if pre == ["de"] and not (day or year):
                continue  # "Rio de Janeiro": a bare "de" makes a month only with a day or year
            days = latest_date(today, MONTHS[name], day, year)
            last = (groups.get("pre") or "").startswith("last ")
            if days is not None and last and days[1] >= today and year is None:
                days = latest_date(today, MONTHS[name], day, today.year - 1)  # asked in March
            if days is not None:
                yield found.start(), found.end(), days


def _weeks_of_month(text: str, today: dt.date) -> Iterable[Match]:
    for found in _WEEK_OF_MONTH_RE.finditer(text):
        year = int(found.group("y")) if found.group("y") else None
        month = latest_date(today, MONTHS[found.group("m")], None, year)
        if month is None:
            continue
        first, last = month
        nth = WEEK_OF_MONTH[found.group("o")]
        if nth < 0:
            first = last - dt.timedelta(days=6)
        else:
            first = first + dt.timedelta(weeks=nth - 1)
            last = min(last, first + dt.timedelta(days=6))
        yield found.start(), found.end(), (first, last)


def _numeric_dates(text: str, today: dt.date) -> Iterable[Match]:
    for pattern in (_CJK_DATE_RE, _ISO_DATE_RE):
        for found in pattern.finditer(text):
            month = _month_number(found.group("m"))
            day = int(found.group("d")) if found.group("d") else None
            year = int(found.group("y")) if found.group("y") else None
            days = None if month is None else latest_date(today, month, day, year)
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
            year, month = today.year, today.month
            if day > today.day:
                year, month = shift_month(today, -1)
            named = calendar_day(year, month, day)
            if named is not None:
                yield found.start(), found.end(), (named, named)


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
        else:  # its latest occurrence before today
            day = today - dt.timedelta(days=(today.weekday() - weekday) % 7 or 7)
        yield found.start(), found.end(), (day, day)


def _weekend(text: str, today: dt.date) -> Iterable[Match]:
    monday = week_of(today)[0]
    last = (monday - dt.timedelta(2), monday - dt.timedelta(1))
    # "This weekend" said on a Monday is the one just gone; later in the week, the coming one.
    this = last if today.weekday() == 0 else (monday + dt.timedelta(5), monday + dt.timedelta(6))
    ahead = (this[0] + dt.timedelta(7), this[1] + dt.timedelta(7))
    for pattern, days in ((_WEEKEND_RE, last), (_THIS_WEEKEND_RE, this), (_NEXT_WEEKEND_RE, ahead)):
        for found in pattern.finditer(text):
            yield found.start(), found.end(), days


_RELATIVE_RE: Final = re.compile(_bounded(RELATIVE_UNITS))
_WEEKEND_RE: Final = re.compile(_bounded(LAST_WEEKEND))
_THIS_WEEKEND_RE: Final = re.compile(_bounded(THIS_WEEKEND))
_NEXT_WEEKEND_RE: Final = re.compile(_bounded(NEXT_WEEKEND))
_MONTH_RES: Final = tuple(re.compile(p) for p in _MONTH_DATES)
_WEEK_OF_MONTH_RE: Final = re.compile(_WEEK_OF_MONTH)
_CJK_DATE_RE: Final = re.compile(_CJK_DATE)
_ISO_DATE_RE: Final = re.compile(_ISO_DATE)
_YEAR_RES: Final = tuple(re.compile(p) for p in _YEAR)
_DAY_RES: Final = tuple(re.compile(p) for p in _DAY_OF_MONTH)
_WEEKDAY_RE: Final = re.compile(_WEEKDAY)
_MATCHERS: Final[tuple[Matcher, ...]] = (
    _relative,
    _counted(tuple(re.compile(p) for p in _AGO), back=True),
    _counted(tuple(re.compile(p) for p in _RECENT), back=False),
    _months,
    _weeks_of_month,
    _numeric_dates,
    _years,
    _days_of_month,
    _weekdays,
    _weekend,
)
_ORDERS: Final = (
    ("earliest", re.compile(_bounded(EARLIEST))),
    ("latest", re.compile(_bounded(LATEST))),
    ("earliest", re.compile(_bounded(BEFORE))),
    ("latest", re.compile(_bounded(AFTER))),
)
_KOREAN_WEEK: Final = re.compile(r"일주일\s*전")


def _found(head: str, as_of: float) -> list[Match]:
    today = dt.datetime.fromtimestamp(as_of, tz=dt.UTC).date()
    found: list[Match] = [m for matcher in _MATCHERS for m in matcher(head, today)]
    for korean in _KOREAN_WEEK.finditer(head):
        found.append((korean.start(), korean.end(), week_of(today - dt.timedelta(weeks=1))))
    return found


def named_windows(text: str, as_of: float) -> list[tuple[float, float]]:
    """Every window the time expressions of `text` name, read against `as_of` (epoch seconds,
    whole UTC days, inclusive): a memory's "last Friday" is the Friday before it was written."""
    return [
        (day_range(first)[0], day_range(last)[1])
        for _, _, (first, last) in _found(text[:MAX_CHARS].lower(), as_of)
    ]


def read_time_words(text: str, as_of: float) -> TimeIntent | None:
    """The time the question names, read against `as_of` (see the module docstring)."""
    head = text[:MAX_CHARS].lower()
    found = _found(head, as_of)
    phrase = since = until = None
    if found:
        start, end, (first, last) = min(found, key=lambda m: (m[0], -(m[1] - m[0])))
        phrase = head[start:end].strip()
        since, until = day_range(first)[0], day_range(last)[1]
    order: Order | None = None
    order_phrase = None
    for name, pattern in _ORDERS:
        hit = pattern.search(head)
        if hit is not None:
            order, order_phrase = ("earliest" if name == "earliest" else "latest"), hit.group(0)
            break
    if phrase is None and order is None:
        return None
    return TimeIntent(phrase, since, until, order, order_phrase)


def window_days(intent: TimeIntent) -> float:
    """How many days the intent's window spans (0 without a window)."""
    if intent.since is None or intent.until is None:
        return 0.0
    return (intent.until - intent.since + 1) / SECONDS_PER_DAY
