"""Adapter plumbing: a time window's bounds for a walk of `memlane_chunks_time` bounded at both
ends, and an estimate the planner gets right (the reason is in adapters/window_span.py)."""

from __future__ import annotations

from sqlalchemy import Connection

from memlane.adapters.window_span import end_cap
from memlane.domain.search import TimeWindow

# `memlane_chunks_span (agent, (time_end - time_start))` (migration 5) makes this one index
# lookup: the agent's entries, read from the largest span down.
_LONGEST_SPAN = "SELECT max(time_end - time_start) FROM memlane_chunks WHERE agent = %s"


def bounds(conn: Connection, agent: str, window: TimeWindow) -> tuple[float, float, float | None]:
    """(since, until, cap) for `time_end >= %s AND time_start <= %s AND time_end <= %s`."""
    since, until = window.bounds()
    span = conn.exec_driver_sql(_LONGEST_SPAN, (agent,)).scalar_one()
    return since, until, end_cap(until, None if span is None else float(span))
