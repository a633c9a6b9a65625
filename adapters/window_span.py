"""Adapters: the upper bound on `time_end` that makes a time window's index walk bounded.

Why: a chunk is in a window when `time_end >= since AND time_start <= until`. On an index led
by time_end only the first bound limits the walk, so a window cost every chunk dated after it
(SQLite, 1M chunks: the oldest day's rids 44 ms, the newest day's 0.3 ms; PostgreSQL estimated a
mid-span day as a quarter of the rows and scanned). A chunk with `time_start <= until` has
`time_end = time_start + span <= until + longest span`, so that third bound keeps the same rows
and bounds the walk. Each store reads the longest span from an index of `time_end - time_start`
at every query (an index lookup), never from a cache a newer chunk would make stale. Pure
Python: both store families import it.
"""

from __future__ import annotations

# Both stores compute the span and the bound in IEEE doubles; the margin keeps a rounding of
# either from putting the bound a hair under a chunk's `time_end` (it only widens the walk).
_MARGIN_SECONDS = 1.0


def end_cap(until: float, span: float | None) -> float | None:
    """The bound on `time_end` of a window ending at `until` when the longest span is `span`.

    None when nothing is dated (`span` None): no chunk is in any window, and `time_end <= NULL`
    holds for none.
    """
    if span is None:
        return None
    cap = until + span
    return cap + abs(cap) * 1e-12 + _MARGIN_SECONDS
