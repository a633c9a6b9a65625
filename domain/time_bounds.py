"""Domain: the ends of a `since` / `until` filter as callers write them, to epoch seconds.

Accepted: an ISO 8601 date (`2026-11-01`: from its first second for `since`, to its last for
`until`) or date and time (UTC unless it names a zone), epoch seconds (a number, or text of nine
digits or more), a `datetime` / `date`, or a span back from now (`7d`, `12h`, `30m`, `2w`, `3mo`,
`1y`). `now` is passed in.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Final, TypeAlias

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
# Epoch seconds written as text (a command line, a URL): nine digits or more, i.e. from 1973 on.
# A shorter bare number is refused rather than read: "2026" is far likelier a year than 33
# minutes past the epoch.
_EPOCH_TEXT: Final = re.compile(r"\d{9,}(?:\.\d+)?")
_BARE_NUMBER: Final = re.compile(r"[+-]?\d+(?:\.\d+)?")


def _aware(moment: dt.datetime) -> float:
    return (moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)).timestamp()


def parse_time_bound(value: object, *, now: float, end: bool, name: str) -> float | None:
    """Epoch seconds of one end of a time filter (None: open); InvalidQuery when unreadable.

    `end` says which end a bare date stands for (its last second for `until`).
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise InvalidQuery(f"{name} must be a time, not {value!r}")
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise InvalidQuery(f"{name} must be a finite time")
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
        if _DATE_ONLY.fullmatch(text):
            first, last = day_range(dt.date.fromisoformat(text))
            return last if end else first
        return _aware(dt.datetime.fromisoformat(text.replace("Z", "+00:00")))
    except ValueError:
        raise InvalidQuery(
            f"{name}: {value!r} is not a time (an ISO 8601 date or date and time, epoch "
            "seconds, or a span back from now such as 7d, 12h, 2w, 3mo)"
        ) from None
