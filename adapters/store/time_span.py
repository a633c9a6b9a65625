"""Adapter plumbing: a time window's bounds for a walk of `idx_chunks_time` bounded at both ends
(the reason is in adapters/window_span.py)."""

from __future__ import annotations

from sqlalchemy import Connection

from memlane.adapters.window_span import end_cap
from memlane.domain.search import TimeWindow

# `idx_chunks_span` (migration 8) turns this into one index lookup (0.002 ms at 1M chunks).
_LONGEST_SPAN = "SELECT max(time_end - time_start) FROM chunks"


def bounds(conn: Connection, window: TimeWindow) -> tuple[float, float, float | None]:
    """(since, until, cap) for `time_end >= ? AND time_start <= ? AND time_end <= ?`."""
    since, until = window.bounds()
    span = conn.exec_driver_sql(_LONGEST_SPAN).scalar_one()
    return since, until, end_cap(until, None if span is None else float(span))
