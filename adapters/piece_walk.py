"""Adapter plumbing shared by the stores: the walk for note chunks that lack piece vectors.

The walk goes through the chunks in rid order from the last rid it returned, so a backfill
never scans again the rows it has done, and starts again from the first at the end (a chunk
that gained its vector in place, behind the walk, is found then). A walk that found none is not
repeated while the store's `state` (what changes with any chunk row or vector) is the same, so a
sync with nothing to do does not scan a large index, and `PieceBacklog` keeps that "none" in
the store for the next process.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from contextlib import AbstractContextManager
from typing import Protocol

import structlog
from sqlalchemy import Connection

from memlane.application.ports.index_store import StoreError
from memlane.domain.chunks import Chunk

log = structlog.get_logger()

# rid after which to look -> (rid, chunk) of the next chunks lacking pieces, oldest first
Fetch = Callable[[int], list[tuple[int, Chunk]]]


class PieceWalk:
    def __init__(self) -> None:
        self._after: dict[str, int] = {}
        self._done: tuple[str, Hashable] | None = None

    def next(self, model: str, state: Hashable, fetch: Fetch) -> list[Chunk]:
        if self.found_none(model, state):
            return []
        after = self._after.get(model, 0)
        found = fetch(after)
        if not found and after:
            found = fetch(0)
        if not found:
            self.remember_none(model, state)
            return []
        self._after[model] = found[-1][0]
        return [chunk for _, chunk in found]

    def found_none(self, model: str, state: Hashable) -> bool:
        """Whether a walk or count found none at `state`."""
        return self._done == (model, state)

    def remember_none(self, model: str, state: Hashable) -> None:
        """Remember that none lack pieces at `state` (found here, or read from another
        process's record); the next walk after a change starts from the first chunk."""
        self._done = (model, state)
        self._after.pop(model, None)

    def owed(self, model: str, state: Hashable, fetch: Fetch) -> int:
        """How many chunks lacking pieces `fetch` finds from the first row, wherever the walk
        stands (a count a limit is checked against must not depend on it); none found is
        remembered as `next` remembers it."""
        if self.found_none(model, state):
            return 0
        found = fetch(0)
        if not found:
            self.remember_none(model, state)
        return len(found)


class BacklogStore(Protocol):
    """What a store gives the backlog: its rows' state, the scan, and notes in its meta rows
    (the vector-count notes of progress_notes.py go through `record` too)."""

    def reading(self) -> AbstractContextManager[Connection]: ...

    def state(self, conn: Connection, model: str) -> str: ...

    def missing(
        self, conn: Connection, model: str, limit: int, after: int
    ) -> list[tuple[int, Chunk]]: ...

    def recorded(self, conn: Connection, key: str) -> str | None: ...

    def record(self, key: str, value: str) -> None: ...


_NONE_KEY = "pieces_complete:"  # + model -> the state at which no note chunk lacked pieces


class PieceBacklog:
    """The walk, with its "none" also written to the store's meta table.

    Finding none means scanning every note chunk (an anti-join over the chunk rows): 0.21 s at
    100k chunks, 2.7 s at 1M (bench/pieces_owed_bench.py, session 24). The walk remembers a
    "none" only in its process, and the CLI without a daemon is a new process at every command,
    so every command paid the scan. The "none" is therefore written with the state of the chunk
    rows it holds for (a state never comes back: SQLite's is the database's id and a counter,
    PostgreSQL's a sequence value); a new process that reads the same state skips the scan, and
    any chunk write moves the state. Writing pieces adds no missing one and moves nothing.
    """

    def __init__(self, store: BacklogStore) -> None:
        self._store = store
        self._walk = PieceWalk()

    def next(self, model: str, limit: int) -> list[Chunk]:
        """The walk's next note chunks lacking pieces of `model` (see `PieceWalk.next`)."""
        with self._store.reading() as conn:
            state = self._store.state(conn, model)
            if self._known_none(conn, model, state):
                return []
            found = self._walk.next(
                model, state, lambda after: self._store.missing(conn, model, limit, after)
            )
        if not found:
            self._record_none(model, state)
        return found

    def owed(self, model: str, at_most: int) -> int:
        """How many note chunks lack pieces of `model`, counted up to `at_most` from the first."""
        with self._store.reading() as conn:
            state = self._store.state(conn, model)
            if self._known_none(conn, model, state):
                return 0
            count = self._walk.owed(
                model, state, lambda after: self._store.missing(conn, model, at_most, after)
            )
        if not count:
            self._record_none(model, state)
        return count

    def _known_none(self, conn: Connection, model: str, state: str) -> bool:
        if self._walk.found_none(model, state):
            return True
        if self._store.recorded(conn, _NONE_KEY + model) == state:
            self._walk.remember_none(model, state)
            return True
        return False

    def _record_none(self, model: str, state: str) -> None:
        """Write the "none" for other processes; a store that cannot be written (read-only),
        or that skips the write rather than wait for another writer (SQLite), scans again in its
        next process, which is all this saves."""
        try:
            self._store.record(_NONE_KEY + model, state)
        except StoreError as exc:
            log.info("pieces_complete_not_recorded", error=str(exc))
