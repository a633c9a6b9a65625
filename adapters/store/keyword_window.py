"""Adapter plumbing: the keyword leg within a `since` / `until` window, exact, by its width.

Why: FTS5 cannot take a window as its plan. The pre-filter (`rows.keyword_top` with a window)
reads the window's rids from `idx_chunks_time` and keeps FTS5's matches among them, so its cost
grows with the window: 2.2 s for a year (500,000 of 1M chunks) against 204 ms with no window
(bench/RESULTS.md). A wide window holds most of the best matches anyway, so:

* a window holding fewer than NARROW_ROWS chunks (a capped count on the time index) takes the
  pre-filter, which is cheap there;
* a wider one ranks as if there were no window (the pruned path of keyword_search.py), fetching
  OVERFETCH times the rows asked for, and keeps the ranked rows inside the window (their time
  columns read by rid). The ranking is ordered by (rank, rid) in both paths, so the kept rows
  are exactly the window's best while they number at least `limit` or the ranking ran out;
* when they do not, one more round fetches what the share of the window among the ranked rows
  asks for (at most MAX_FETCH times `limit`), and past that the pre-filter answers. Every path
  returns the pre-filter's rows; only the cost differs (the plan says which was taken).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from sqlalchemy import Connection

from memlane.adapters.store import rows
from memlane.adapters.store.keyword_search import KeywordSearch
from memlane.domain.search import TimeWindow
from memlane.domain.sources import Source

# Below this many chunks in the window the pre-filter costs about what an unfiltered ranking
# does at 1M chunks (bench/time_filter_bench.py: 49 ms at 41,000, 490 ms at 500,000; the capped
# count costs ~2.5 ms). A wider window ranked first took 425 ms at 41,000 (4 % of the index:
# the second round's few thousand rows defeat the pruning and FTS5 ranks every match).
NARROW_ROWS: Final = 50_000
OVERFETCH: Final = 4
# Past a fetch of this many times `limit` the pruning mostly gives up (a rare phrase no longer
# fills it), so the pre-filter is cheaper than a second round.
MAX_FETCH: Final = 8
_MARGIN: Final = 1.25  # the second round asks a quarter more than the share seen predicts


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
    fetch = OVERFETCH * limit
    for _ in range(2):
        ranked = keywords.top(conn, match, sources, every_source=every_source, limit=fetch)
        inside = rows.rids_within(conn, [rid for rid, _ in ranked], window)
        kept = [pair for pair in ranked if pair[0] in inside]
        if len(kept) >= limit or len(ranked) < fetch:
            keywords.last_plan += f"; ranked {fetch}, kept those within the time window"
            return kept[:limit]
        wanted = math.ceil(fetch * limit / len(kept) * _MARGIN) if kept else math.inf
        if wanted > MAX_FETCH * limit:
            break
        fetch = int(wanted)
    return _pre_filter(conn, keywords, match, sources, limit, window, "ranked rows fell outside")


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
