"""PostgreSQL: how far the vectors of one model are, counted once per state of the agent's rows.

Counting an agent's chunks with a vector of a model reads every entry of its (agent, model)
index, and a search asked three times (the gap it fills, the piece backlog's state, the warning
it may give): 166 ms of every search at 100k chunks before session 25
(bench/pg_progress_bench.py, bench/RESULTS.md). The count is kept with the state of the agent's
chunk rows it was made in (`rows.chunk_state`: the keyword generation that every chunk write
draws and the vector generation that every vector set or dropped in place draws), which one
primary-key read checks: in this process, and in a meta row for the next one
(adapters/progress_notes.py). A read runs in one snapshot, so the state and the count agree.
"""

from __future__ import annotations

import threading

from sqlalchemy import Connection

from memlane.adapters import progress_notes
from memlane.adapters.postgres import meta as meta_rows
from memlane.adapters.postgres import rows
from memlane.application.ports.index_store import VectorProgress

State = tuple[int, int]


class KeptProgress:
    """The last count of this process (one model: a search and the backfill ask for the active
    model only), with the state it holds for. Thread-safe."""

    def __init__(self, agent: str) -> None:
        self._agent = agent
        self._lock = threading.Lock()
        self._entry: tuple[State, str, VectorProgress] | None = None

    def get(self, conn: Connection, model: str) -> tuple[VectorProgress, State | None]:
        """The counts of `model` in the caller's snapshot, and the state when they were counted
        here (the caller writes the note for other processes once its read has ended)."""
        state = rows.chunk_state(conn, self._agent)
        with self._lock:
            entry = self._entry
        if entry is not None and entry[0] == state and entry[1] == model:
            return entry[2], None
        counted: State | None = None
        noted = meta_rows.get(conn, self._agent, progress_notes.key(model))
        progress = progress_notes.decode(noted, state)
        if progress is None:
            progress, counted = rows.vector_progress(conn, self._agent, model), state
        with self._lock:
            self._entry = (state, model, progress)
        return progress, counted
