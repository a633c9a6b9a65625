"""Domain: temporal decay, older memories score lower (dated notes and transcripts by content
date, evergreen notes never); the clock's "now" is an argument."""

from __future__ import annotations

import calendar
import datetime as dt
import math
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Final

from memlane.domain.scoring import SECONDS_PER_DAY, Fused
from memlane.domain.sources import Source

_DATED_NOTE: Final = re.compile(r"(?:^|/)memory/(\d{4})-(\d{2})-(\d{2})\.md$")


def decay_factor(age_days: float, half_life_days: float) -> float:
    """exp(-ln 2 / half_life × age): 0.5 after one half-life.

    Age is clamped to ≥ 0 (future dates do not boost); a non-finite age, or a half-life that is
    ≤ 0 or non-finite (decay disabled), gives 1.
    """
    if not math.isfinite(age_days) or not math.isfinite(half_life_days) or half_life_days <= 0:
        return 1.0
    return math.exp(-math.log(2) / half_life_days * max(0.0, age_days))


def _dated_note_timestamp(path: str) -> float | None:
    match = _DATED_NOTE.search(path)
    if match is None:
        return None
    year, month, day = (int(g) for g in match.groups())
    try:
        dt.date(year, month, day)
    except ValueError:
        return None
    return float(calendar.timegm((year, month, day, 0, 0, 0)))


def item_timestamp(
    source: Source,
    path: str,
    *,
    chunk_timestamp: float | None,
    file_mtime: float | None,
) -> float | None:
    """When an item was written, for decay; None means "never decays".

    1. `memory/YYYY-MM-DD.md` (anywhere in the path, valid calendar date) → that day 00:00 UTC.
    2. Memory evergreen files → None: `MEMORY.md`, `memory.md` and every other file under
       `memory/`, including badly dated names such as `memory/2026-02-30.md` (the reference fell
       back to the mtime, which changes when a file is merely touched).
    3. Sessions → the chunk's own timestamp (the message time), else the file mtime (the
       reference never decayed sessions).
    4. Anything else → the file mtime (None if unknown).
    """
    normalized = path.replace("\\", "/").removeprefix("./")
    dated = _dated_note_timestamp(normalized)
    if dated is not None:
        return dated
    if source == "memory" and (
        normalized in ("MEMORY.md", "memory.md") or normalized.startswith("memory/")
    ):
        return None
    if source == "sessions" and chunk_timestamp is not None:
        return chunk_timestamp
    return file_mtime


def apply_temporal_decay(
    fused: Sequence[Fused],
    *,
    now: float,
    half_life_days: float,
) -> list[Fused]:
    """Multiply each score by decay_factor(age in days, half-life); re-sort (stable).

    `now` is epoch seconds from the Clock port. The multiplier is recorded in `decay_factor`.
    """
    out: list[Fused] = []
    for item in fused:
        ts = item_timestamp(
            item.source, item.path, chunk_timestamp=item.timestamp, file_mtime=item.file_mtime
        )
        factor = 1.0 if ts is None else decay_factor((now - ts) / SECONDS_PER_DAY, half_life_days)
        out.append(
            replace(item, score=item.score * factor, decay_factor=item.decay_factor * factor)
        )
    return sorted(out, key=lambda item: -item.score)
