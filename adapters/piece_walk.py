"""Adapter plumbing shared by the stores: the walk for note chunks that lack piece vectors.

The walk goes through the chunks in rid order from the last rid it returned, so a backfill
never scans again the rows it has done, and starts again from the first at the end (a chunk
that gained its vector in place, behind the walk, is found then). A walk that found none is not
repeated while the store's `state` (what changes with any chunk row or vector) is the same, so a
sync with nothing to do does not scan a large index.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from memlane.domain.chunks import Chunk

# rid after which to look -> (rid, chunk) of the next chunks lacking pieces, oldest first
Fetch = Callable[[int], list[tuple[int, Chunk]]]


class PieceWalk:
    def __init__(self) -> None:
        self._after: dict[str, int] = {}
        self._done: tuple[str, Hashable] | None = None

    def next(self, model: str, state: Hashable, fetch: Fetch) -> list[Chunk]:
        if self._done == (model, state):
            return []
        after = self._after.get(model, 0)
        found = fetch(after)
        if not found and after:
            found = fetch(0)
        if not found:
            self._done = (model, state)
            self._after.pop(model, None)
            return []
        self._after[model] = found[-1][0]
        return [chunk for _, chunk in found]

    def found_none(self, model: str, state: Hashable) -> bool:
        """Whether a walk or count found none at `state`."""
        return self._done == (model, state)

    def remember_none(self, model: str, state: Hashable) -> None:
        """Take a "none" found elsewhere (another process) for `state`."""
        self._done = (model, state)
        self._after.pop(model, None)

    def owed(self, model: str, state: Hashable, fetch: Fetch) -> int:
        """How many chunks lacking pieces `fetch` finds from the first row, wherever the walk
        stands (a count a limit is checked against must not depend on it); none found is
        remembered as `next` remembers it."""
        if self._done == (model, state):
            return 0
        found = fetch(0)
        if not found:
            self._done = (model, state)
            self._after.pop(model, None)
        return len(found)
