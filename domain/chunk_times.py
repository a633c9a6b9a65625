"""Domain: when the text of a chunk was written, as a time range (epoch seconds, UTC).

Transcripts carry a timestamp per message; notes are dated by a dated file name
(`memory/YYYY-MM-DD.md`) or a dated markdown heading (`## 2026-11-17`, `## 17 Nov 2026`,
`## November 17, 2026`, `## 17.11.2026`, `## 2026年11月17日`, `## 2026년 11월 17일`; a range
`## 2026-11-17 – 2026-11-20` or an ISO week `## 2026-W47` covers its days; a slash date only when
its order is plain, so `## 11/12/2026` dates nothing; a setext heading, underlined, the same),
which dates the lines of its section;
anything else has the file's mtime. A date without a time covers its whole UTC day. A chunk
spans the times of its lines: one holding a dated section and undated text (a preamble, an
undated section) spans both, so a filter on either time finds it; an undated heading or rule
line alone does not stretch it (a title above dated sections says nothing about when).
Pure functions: the mtime is passed in.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections.abc import Sequence
from typing import Final, TypeAlias

from memlane.domain.markdown_blocks import heading_levels

# (start, end), both inclusive, epoch seconds.
TimeRange: TypeAlias = tuple[float, float]
SECONDS_PER_DAY: Final = 86_400

_DATED_FILE: Final = re.compile(r"(?:^|/)(\d{4})-(\d{2})-(\d{2})\.md$")
_HEADING: Final = re.compile(r" {0,3}(#{1,6})[ \t]+(.*)$")
_MONTHS: Final = {
    name: number
    for number, names in enumerate(
        (
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ),
        start=1,
    )
    for name in names
}
_MONTH_NAMES: Final = "|".join(sorted(_MONTHS, key=len, reverse=True))
_HEADING_DATES: Final = (
    # 2026-11-17, 2026/11/17, 2026.11.17
    (re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)"), "ymd"),
    # 2026年11月17日, 2026년 11월 17일
    (re.compile(r"(\d{4})\s*[年년]\s*(\d{1,2})\s*[月월]\s*(\d{1,2})\s*[日일]"), "ymd"),
    # 17 Nov 2026, 17 November 2026, 17. November 2026
    (re.compile(rf"(?<!\d)(\d{{1,2}})\.?\s+({_MONTH_NAMES})\.?,?\s+(\d{{4}})(?!\d)", re.I), "dmy"),
    # November 17, 2026, Nov 17 2026, Nov 17th, 2026
    (
        re.compile(
            rf"\b({_MONTH_NAMES})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})(?!\d)", re.I
        ),
        "mdy",
    ),
    # 17.11.2026 (the dotted order is always day first)
    (re.compile(r"(?<![\w.])(\d{1,2})\.(\d{1,2})\.(\d{4})(?!\d)"), "dmy-numeric"),
    # 17/11/2026, 11/17/2026: read only when one number is above 12 (11/12/2026 is either)
    (re.compile(r"(?<![\w/])(\d{1,2})/(\d{1,2})/(\d{4})(?!\d)"), "slash"),
)
# 2026-W47: an ISO week, Monday to Sunday
_HEADING_WEEK: Final = re.compile(r"(?<![\d\w])(\d{4})-?W(\d{2})(?!\d)", re.I)
# Between the two dates of a range: 2026-11-17 – 2026-11-20, 17 Nov 2026 to 20 Nov 2026
_RANGE_LINK: Final = re.compile(r"\s*(?:-|–|—|~|〜|～|\.\.|to|until|through|bis|au)\s*", re.I)


def day_range(day: dt.date) -> TimeRange:
    """The whole UTC day of `day`: 00:00:00 to 23:59:59."""
    start = float(calendar.timegm((day.year, day.month, day.day, 0, 0, 0)))
    return start, start + SECONDS_PER_DAY - 1


def _date(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def dated_file_day(path: str) -> dt.date | None:
    """The day of a file named `YYYY-MM-DD.md` (a valid calendar date), else None."""
    match = _DATED_FILE.search(path.replace("\\", "/"))
    if match is None:
        return None
    year, month, day = (int(g) for g in match.groups())
    return _date(year, month, day)


def _read_date(order: str, a: str, b: str, c: str) -> dt.date | None:
    if order == "ymd":
        return _date(int(a), int(b), int(c))
    if order == "dmy":
        return _date(int(c), _MONTHS[b.lower()], int(a))
    if order == "mdy":
        return _date(int(c), _MONTHS[a.lower()], int(b))
    if order == "dmy-numeric":
        return _date(int(c), int(b), int(a))
    first, second = int(a), int(b)  # a slash date: the order must be plain
    if (first > 12) == (second > 12):
        return None
    return _date(int(c), second, first) if first > 12 else _date(int(c), first, second)


def _first_date(title: str, at: int = 0) -> tuple[int, int, dt.date] | None:
    """The earliest date in `title` from `at` on: (start, end, day)."""
    found: list[tuple[int, int, dt.date]] = []
    for pattern, order in _HEADING_DATES:
        for match in pattern.finditer(title, at):
            day = _read_date(order, *match.groups())
            if day is not None:
                found.append((match.start(), match.end(), day))
                break
    return min(found, key=lambda f: f[0]) if found else None


def heading_days(line: str) -> tuple[dt.date, dt.date] | None:
    """The first and last day a markdown ATX heading line names: one date, a range of two
    (`## 2026-11-17 – 2026-11-20`) or an ISO week (`## 2026-W47`); None when it names none."""
    heading = _HEADING.match(line)
    return None if heading is None else title_days(heading.group(2))


def title_days(title: str) -> tuple[dt.date, dt.date] | None:
    """The first and last day a heading's title names (see heading_days)."""
    first = _first_date(title)
    week = _HEADING_WEEK.search(title)
    if week is not None and (first is None or week.start() < first[0]):
        try:
            monday = dt.date.fromisocalendar(int(week.group(1)), int(week.group(2)), 1)
            return monday, monday + min(dt.timedelta(days=6), dt.date.max - monday)
        except ValueError:
            pass
    if first is None:
        return None
    _, end, day = first
    link = _RANGE_LINK.match(title, end)
    if link is not None:
        second = _first_date(title, link.end())
        if second is not None and second[0] == link.end() and second[2] >= day:
            return day, second[2]
    return day, day


def heading_date(line: str) -> dt.date | None:
    """The (first) date a markdown heading line names, if it names one (see heading_days)."""
    days = heading_days(line)
    return None if days is None else days[0]


def note_line_times(
    lines: Sequence[str], path: str, levels: Sequence[int] | None = None
) -> list[TimeRange | None]:
    """The time range each line of a note names, None for a line nothing dates.

    `levels` is each line's heading level (markdown_blocks.heading_levels, read here when not
    given); a setext heading's title is its first line.

    A dated heading dates its section (until the next heading of the same or a higher level);
    other lines take the day of a dated file name, else None (the mtime, but only for a chunk
    with no dated line: a title above dated sections must not stretch their chunk to the
    mtime).
    """
    day = dated_file_day(path)
    default = day_range(day) if day is not None else None
    # Open sections: (heading level, range) from the outermost in.
    sections: list[tuple[int, TimeRange | None]] = []
    times: list[TimeRange | None] = []
    for line, level in zip(lines, heading_levels(lines) if levels is None else levels, strict=True):
        if level:
            while sections and sections[-1][0] >= level:
                sections.pop()
            atx = _HEADING.match(line)
            dated = title_days(line.strip() if atx is None else atx.group(2))
            days = None if dated is None else (day_range(dated[0])[0], day_range(dated[1])[1])
            sections.append((level, days))
        current = next((r for _, r in reversed(sections) if r is not None), default)
        times.append(current)
    return times


def transcript_line_times(timestamps: Sequence[float | None], mtime: float) -> list[TimeRange]:
    """Each rendered message's time: its timestamp, else the last known one before it, else the
    first known after it, else the file's mtime (a message without a time sits between its
    neighbours)."""
    known = [t for t in timestamps if t is not None]
    fallback = known[0] if known else mtime
    times: list[TimeRange] = []
    last: float | None = None
    for stamp in timestamps:
        if stamp is not None:
            last = stamp
        value = last if last is not None else fallback
        times.append((value, value))
    return times


_NO_TEXT: Final = re.compile(r"[\s=\-*_]*")


def note_chunk_time(
    lines: Sequence[str],
    levels: Sequence[int],
    line_times: Sequence[TimeRange | None],
    mtime: float,
) -> TimeRange:
    """The time range of a note chunk of `lines` (their heading levels and `note_line_times`):
    the span of its dated lines, widened to the mtime when it also holds undated text (a line
    that is no heading, no rule or setext underline, not blank); the mtime when nothing in it
    is dated. Before, undated text beside a dated section took that section's day, so `--since`
    the mtime's day missed text written then."""
    dated = span(line_times)
    if dated is None:
        return mtime, mtime
    undated_text = any(
        t is None and level == 0 and not _NO_TEXT.fullmatch(line)
        for line, level, t in zip(lines, levels, line_times, strict=True)
    )
    if not undated_text:
        return dated
    return min(dated[0], mtime), max(dated[1], mtime)


def span(times: Sequence[TimeRange | None]) -> TimeRange | None:
    """The smallest range holding every known range of `times` (None when none is known)."""
    known = [t for t in times if t is not None]
    if not known:
        return None
    return min(t[0] for t in known), max(t[1] for t in known)


def iso_time(start: float | None, end: float | None) -> str | None:
    """ISO 8601 in UTC: an instant when start == end, else an interval `start/end`; None for a
    time no date can show (an index built before transcripts' times were range-checked may
    hold one: the hit is shown without its time rather than failing the whole search)."""
    if start is None or end is None:
        return None
    if not all(_SHOWABLE[0] <= t <= _SHOWABLE[1] for t in (start, end)):
        return None
    first = _iso(start)
    return first if start == end else f"{first}/{_iso(end)}"


# Years 1 to 9999, a day inside each end so no time zone arithmetic overflows.
_SHOWABLE: Final = (
    dt.datetime(1, 1, 2, tzinfo=dt.UTC).timestamp(),
    dt.datetime(9999, 12, 30, tzinfo=dt.UTC).timestamp(),
)


def _iso(seconds: float) -> str:
    moment = dt.datetime.fromtimestamp(seconds, tz=dt.UTC)
    text = moment.isoformat(timespec="seconds")
    return text.replace("+00:00", "Z")
