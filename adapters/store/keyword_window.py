"""Adapter plumbing: the SQLite keyword leg within a `since` / `until` window, by its width.

Why: FTS5 cannot take a window as its plan. The pre-filter (`rows.keyword_top` with a window)
reads the window's rids from `idx_chunks_time` and keeps FTS5's matches among them, so its cost
grows with the window: 604 ms for a year (500,000 of 1M chunks) against 59 ms with no window
(bench/RESULTS.md). A window holding fewer than NARROW_ROWS chunks (a capped count on the time
index) takes the pre-filter, which is cheap there; a wider one is ranked first
(`adapters/ranked_window.py`: the pruned ranking over-fetched, the rows inside kept, exactly
the pre-filter's rows), and the pre-filter answers when too few ranked rows fall inside. The
plan says which.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from sqlalchemy import Connection

from memlane.adapters.ranked_window import ranked_within
from memlane.adapters.store import rows
from memlane.adapters.store.keyword_search import KeywordSearch
from memlane.domain.search import TimeWindow
from memlane.domain.sources import Source

# Below this many chunks in the window the pre-filter costs about what an unfiltered ranking
# does at 1M chunks (bench/time_filter_bench.py: 49 ms at 41,000, 490 ms at 500,000; the capped
# count costs ~2.5 ms). A wider window ranked first took 425 ms at 41,000 (4 % of the index:
# the second round's few thousand rows defeat the pruning and FTS5 ranks every match).
NARROW_ROWS: Final = 50_000


def window_top(
    conn: Connection,
    keywords: KeywordSearch,
    match: str,
    sources: Sequence[Source],
    *,
    every_source: bool,
    limit: int,
    window: TimeWindow,
) -> list[tuple[int, float]]:
    """(rid, bm25 rank) of the best `limit` matches written within `window`, best first, ties
    by rid: the same rows as the pre-filter, whichever way they are found."""
    if rows.window_rows_at_most(conn, window, NARROW_ROWS) < NARROW_ROWS:
        return _pre_filter(conn, keywords, match, sources, limit, window, "narrow")
    kept, fetch = ranked_within(
        lambda n: keywords.top(conn, match, sources, every_source=every_source, limit=n),
        lambda rids: rows.rids_within(conn, rids, window),
        limit,
    )
    if kept is None:
        return _pre_filter(
            conn, keywords, match, sources, limit, window, "ranked rows fell outside"
        )
    keywords.last_plan += f"; ranked {fetch}, kept those within the time window"
    return kept


def _pre_filter(
    conn: Connection,
    keywords: KeywordSearch,
    match: str,
    sources: Sequence[Source],
    limit: int,
    window: TimeWindow,
    why: str,
) -> list[tuple[int, float]]:
    keywords.last_plan = f"fts5: time window ({why})"
    return rows.keyword_top(conn, match, sources, every_source=False, limit=limit, window=window)
