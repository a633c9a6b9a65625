"""Application: the search's time step: lift the hits written when the question says.

The domain does the reading and the arithmetic (domain/time_boost.py); this step decides
whether to run it at all. Most questions name no time, and the reader compiles ~50-80 ms of
patterns on import, so a question the cheap gate (domain/time_gate.py) clears never loads it.
`--explain` always reads, so the window found (or none) can be shown.
"""

from __future__ import annotations

from collections.abc import Sequence

from memlane.domain.config import QuerySettings
from memlane.domain.scoring import Fused
from memlane.domain.time_gate import may_name_time


def rank_by_time(
    kept: Sequence[Fused],
    text: str,
    *,
    settings: QuerySettings,
    as_of: float,
    explain: bool,
) -> tuple[list[Fused], str | None]:
    """The hits re-scored by the time boosts the settings turn on, and the time words read
    (None when nothing was read)."""
    window_or_order = settings.time_boost > 0 or settings.time_order_boost > 0
    if not (
        explain
        or settings.when_boost > 0
        or (window_or_order and may_name_time(text, orders=settings.time_order_boost > 0))
    ):
        return list(kept), None
    # Imported here: see the module docstring.
    from memlane.domain.time_boost import TimeStrengths, boost_by_time

    return boost_by_time(
        kept,
        text,
        as_of=as_of,
        strengths=TimeStrengths(
            settings.time_boost,
            settings.time_order_boost,
            settings.when_boost,
            max_drop=settings.time_max_drop,
        ),
        explain=explain,
    )
