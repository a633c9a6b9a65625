"""Adapter plumbing: a wide `since` / `until` window answered by ranking first, exactly.

Both stores' keyword legs can rank fast without a window (MaxScore pruning) but not with one:
their window filter ranks every match inside it, at a cost growing with the window. For a
window holding a large share of the index, `ranked_within` ranks as if there were no window,
fetching OVERFETCH times the rows asked for, and keeps the ranked rows inside the window. The
ranking is ordered by (rank, rid) as the filtered one is, so the kept rows are exactly the
window's best while they number at least `limit` or the ranking ran out. When they do not, one
more round fetches what the share seen among the ranked rows asks for (at most MAX_FETCH times
`limit`: past that the pruning mostly gives up and the store's filter is cheaper), and past
that None tells the caller to take its filter.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Final, TypeAlias

Ranked: TypeAlias = list[tuple[int, float]]

OVERFETCH: Final = 4
MAX_FETCH: Final = 8
_MARGIN: Final = 1.25  # the second round asks a quarter more than the share seen predicts


def ranked_within(
    rank: Callable[[int], Ranked],
    inside: Callable[[Sequence[int]], set[int]],
    limit: int,
) -> tuple[Ranked | None, int]:
    """(the best `limit` of `rank`'s rows that `inside` keeps, or None when the window must be
    filtered instead; the last fetch). `rank(n)` returns the best n (rid, rank) pairs, best
    first, ties by rid; `inside(rids)` those of `rids` within the window."""
    fetch = OVERFETCH * limit
    for _ in range(2):
        ranked = rank(fetch)
        within = inside([rid for rid, _ in ranked])
        kept = [pair for pair in ranked if pair[0] in within]
        if len(kept) >= limit or len(ranked) < fetch:
            return kept[:limit], fetch
        wanted = math.ceil(fetch * limit / len(kept) * _MARGIN) if kept else math.inf
        if wanted > MAX_FETCH * limit:
            break
        fetch = int(wanted)
    return None, fetch
