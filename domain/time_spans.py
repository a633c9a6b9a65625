"""Domain: the span a question's time words name together.

The reader (time_words.py) finds each time expression alone, so "since Monday" named Monday
only, and "from the 16th to the 19th" the 16th: the memories the user asked for (Tuesday to
today, the 17th to the 19th) were pushed below the one day. Here the words around the first
expression widen its window:

- a range joins it to the next expression: "from Monday to Wednesday", "the 16th - the 19th",
  "between the 1st and the 5th", "von Montag bis Mittwoch", "月曜日から水曜日まで",
  "월요일부터 수요일까지", "从周一到周三" (first day of the one to last day of the other; a link
  that is also an ordinary word, "and" / "a" / "et", counts only after "between" / "from" …);
- "since X" / "seit" / "desde" / "depuis" / "自从" / "X以来" / "Xから" / "X부터" open it up to
  the day asked;
- "until X" / "bis" / "hasta" / "jusqu'à" / "Xまで" / "X까지" open it from the calendar's start.

An open window's neighbourhood is a day (`OPEN_REACH_DAYS`), not half its width: "since 2025"
must not lift 2024. Pure: no I/O, no clock.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, TypeAlias

from memlane.domain.calendar_days import Days, week_of

Reread: TypeAlias = Callable[[int, int, dt.date], Days | None]
_A_YEAR_DAYS: Final = 366

# The first day a window can start on: "until X" reaches back to it.
CALENDAR_START: Final = dt.date(1, 1, 1)
OPEN_REACH_DAYS: Final = 1.0

_LATIN_EDGE: Final = r"(?<![\w'])"
# Links that make a range by themselves, and those that do only after an opener ("between the
# 1st and the 5th"; a bare "and" joins two questions as often as two days).
_STRONG_LINKS: Final = (
    "to", "until", "till", "through", "thru", "-", "–", "—", "~", "〜", "bis", "hasta", "até",
    "jusqu'au", "jusqu'à", "au", "到", "至", "から", "부터",
)  # fmt: skip
_WEAK_LINKS: Final = ("and", "y", "e", "et", "und", "a", "à")
_RANGE_OPENERS: Final = (
    "between", "from", "entre", "zwischen", "von", "de", "du", "desde", "从", "從", "自",
)  # fmt: skip
_SINCE_BEFORE: Final = (
    "since", "ever since", "starting", "starting from", "seit", "desde", "depuis", "自从",
    "自從", "从", "從",
)  # fmt: skip
_SINCE_AFTER: Final = ("以来", "以來", "以降", "から", "부터", "이후", "이래", "开始", "開始")
# Not "up to": "what was I up to yesterday" asks what I did.
_UNTIL_BEFORE: Final = (
    "until", "till", "up until", "bis", "hasta", "até", "jusqu'à", "jusqu'au", "直到",
)  # fmt: skip
_UNTIL_AFTER: Final = ("まで", "까지", "为止", "為止")


def _words(words: Sequence[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


def _before(words: Sequence[str]) -> re.Pattern[str]:
    """One of `words` right before an expression (its own word edge for Latin script)."""
    return re.compile(rf"(?:{_LATIN_EDGE}|(?<=[^\x00-\x7f]))(?:{_words(words)})\s*$")


_LINK_RE: Final = re.compile(rf"\s*(?:{_words(_STRONG_LINKS)})\s*")
_WEAK_LINK_RE: Final = re.compile(rf"\s+(?:{_words(_WEAK_LINKS)})\s+")
_RANGE_OPENER_RE: Final = _before(_RANGE_OPENERS)
_SINCE_BEFORE_RE: Final = _before(_SINCE_BEFORE)
_UNTIL_BEFORE_RE: Final = _before(_UNTIL_BEFORE)
_SINCE_AFTER_RE: Final = re.compile(rf"\s*(?:{_words(_SINCE_AFTER)})")
_UNTIL_AFTER_RE: Final = re.compile(rf"\s*(?:{_words(_UNTIL_AFTER)})")
# A word that opens an expression's own match ("since 2025", "from 11/17"): the patterns of
# some expressions take it in.
_OWN_OPENER_RE: Final = re.compile(r"(?P<w>since|from|until|till|seit|bis|desde|depuis)\s")
_RANGE_INSIDE_RE: Final = re.compile(r"から|부터|到|至|[~〜]")
_HELD_LINK_RE: Final = re.compile(r"(?P<w>to|through|thru|until|till|bis)\s")
_WEEK_OF_RE: Final = re.compile(r"(?<![\w'])(?:the\s+)?week\s+of\s+$")


@dataclass(frozen=True, slots=True)
class Span:
    """The widened window: where its phrase starts and ends in the text, its first and last
    day, and whether an end is open (its neighbourhood is then a day)."""

    start: int
    end: int
    days: Days
    open: bool = False


def widen(
    text: str,
    matches: Sequence[tuple[int, int, Days]],
    first: int,
    today: dt.date,
    reread: Reread,
) -> Span:
    """The span of `matches[first]` in `text` (lower-cased), joined to the next expression by a
    range link, else opened by since / until words; itself when no such word is there.
    `reread(start, end, day)` reads the expression at text[start:end] as if asked on `day`."""
    start, end, days = matches[first]
    if days[0] == days[1]:  # "the week of November 9": the week that holds the day
        week = _WEEK_OF_RE.search(text[:start] + ("of " if text.startswith("of ", start) else ""))
        if week is not None:
            with contextlib.suppress(OverflowError):  # the week of 9999-12-31 leaves the calendar
                start, days = min(start, week.start()), week_of(days[0])
    opener = _OWN_OPENER_RE.match(text, start)
    own = opener["w"] if opener is not None else None
    before = text[:start] if own is None else text[:start] + own
    after = [m for m in matches if m[0] >= end]
    if after:
        nxt = min(after, key=lambda m: (m[0], -(m[1] - m[0])))
        # The next expression may hold its link: "from 11/17 to 11/19" ("to 11/19" is one).
        held = _HELD_LINK_RE.match(text, nxt[0])
        link = text[end : nxt[0]] + (held["w"] if held is not None else "")
        ranged = _LINK_RE.fullmatch(link) is not None or (
            _WEAK_LINK_RE.fullmatch(link) is not None
            and (_RANGE_OPENER_RE.search(before) is not None or own == "from")
        )
        last = _range_end(days, nxt, reread) if ranged else None
        if last is not None:
            return Span(start, nxt[1], (days[0], last))
    since = _opened(text, start, end, before, own, "since", _SINCE_BEFORE_RE, _SINCE_AFTER_RE)
    if since is not None:
        return Span(since[0], since[1], (days[0], max(days[1], today)), open=True)
    until = _opened(text, start, end, before, own, "until", _UNTIL_BEFORE_RE, _UNTIL_AFTER_RE)
    if until is not None:
        return Span(until[0], until[1], (CALENDAR_START, days[1]), open=True)
    return Span(start, end, days)


def _range_end(days: Days, nxt: tuple[int, int, Days], reread: Reread) -> dt.date | None:
    """The last day of a range from `days` to the expression `nxt`, None when no reading of it
    ends at or after the start.

    An end is read against the day asked, which is wrong for a range that is not about now:
    "1942年7月22日から9月10日" would end in this year's September, and "from Monday to
    Wednesday" asked on a Tuesday in last week's Wednesday (a bare weekday or "the 19th" is its
    last occurrence). So an end before the start, or far past it (over a year, and over twenty
    times the start's own width), is read again as if asked on the start's first day, a week, a
    month, a year later; the first reading at or after the start ends the range."""
    end = nxt[2]
    width = (days[1] - days[0]).days + 1
    if end[1] >= days[0] and (end[1] - days[0]).days <= max(_A_YEAR_DAYS, 20 * width):
        return end[1]
    for ahead in (0, 7, 31, _A_YEAR_DAYS):
        try:
            asked = days[0] + dt.timedelta(days=ahead)
            again = reread(nxt[0], nxt[1], asked)
        except OverflowError:
            break
        if again is not None and again[0] >= days[0]:
            return again[1]
    return None


def _opened(
    text: str,
    start: int,
    end: int,
    before: str,
    own: str | None,
    kind: str,
    words_before: re.Pattern[str],
    words_after: re.Pattern[str],
) -> tuple[int, int] | None:
    """Where the phrase starts and ends with the opening word taken in, None without one."""
    if own is not None and _OWN_KIND.get(own) == kind:
        return start, end
    found = words_before.search(before) if own is None else None
    if found is not None:
        return found.start(), end
    if _RANGE_INSIDE_RE.search(text, start, end) is not None:
        return None  # "3月から5月まで": まで closes the range the phrase already is
    found = words_after.match(text, end)
    return (start, found.end()) if found is not None else None


_OWN_KIND: Final = {
    "since": "since", "seit": "since", "desde": "since", "depuis": "since",
    "until": "until", "till": "until", "bis": "until",
}  # fmt: skip
