"""Transcript encoding shared by the conversation data sets (eval protocol §1).

One JSON object per line and no header, so line i (1-based) is turn i; each session has one time,
so turn 1 gets it and every following turn one second more.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

_MONTHS = {
    m: i
    for i, m in enumerate(
        [
            "january", "february", "march", "april", "may", "june",
            "july", "august", "september", "october", "november", "december",
        ],
        start=1,
    )
}  # fmt: skip

_LOCOMO_TIME = re.compile(
    r"^\s*(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$", re.I
)
_LME_TIME = re.compile(r"^\s*(\d{4})/(\d{2})/(\d{2})\s*(?:\([A-Za-z]+\))?\s*(\d{2}):(\d{2})\s*$")


def parse_locomo_time(value: str) -> datetime:
    """`"1:56 pm on 8 May, 2023"` -> 2023-05-08T13:56:00Z."""
    m = _LOCOMO_TIME.match(value)
    if m is None:
        raise ValueError(f"unrecognised LoCoMo date: {value!r}")
    hour, minute, ampm, day, month, year = m.groups()
    h = int(hour) % 12 + (12 if ampm.lower() == "pm" else 0)
    month_no = _MONTHS.get(month.lower())
    if month_no is None:
        raise ValueError(f"unrecognised month in LoCoMo date: {value!r}")
    return datetime(int(year), month_no, int(day), h, int(minute), tzinfo=UTC)


def parse_lme_time(value: str) -> datetime:
    """`"2023/05/20 (Sat) 02:21"` -> 2023-05-20T02:21:00Z."""
    m = _LME_TIME.match(value)
    if m is None:
        raise ValueError(f"unrecognised LongMemEval date: {value!r}")
    year, month, day, hour, minute = (int(g) for g in m.groups())
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def iso_z(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def encode_session(turns: Sequence[tuple[str, str]], start: datetime) -> str:
    """(role, content) turns -> JSONL text, one line per turn, newline-terminated."""
    lines = []
    for i, (role, content) in enumerate(turns):
        record = {
            "type": "message",
            "message": {"role": role, "content": content},
            "timestamp": iso_z(start + timedelta(seconds=i)),
        }
        lines.append(json.dumps(record, ensure_ascii=False))
    return "".join(line + "\n" for line in lines)
