"""Adapter plumbing shared by the stores: a count of vectors written down for the next process.

Both stores keep their last `vector_progress` count for the state of the chunk rows it was made
in (SQLite: the database's id and write counter; PostgreSQL: two sequence-drawn generations), but
only inside one process, and every CLI command without the daemon is a new one: each counted
every chunk again (at 1M chunks: 6 ms in SQLite on a quiet machine, 81 ms in session 8's loaded
CLI runs; ~110 ms a count in PostgreSQL, bench/RESULTS.md "Session 25"). So the count is also
written to the store's meta rows with its state; a process that reads the same state takes it.
A state never comes back (a rebuild makes a new database id; a sequence never repeats), so a
note read back under its own state is exact, and any other note is ignored. A note is a saving,
never a duty: a store that cannot write it, or (SQLite) finds another writer holding the file,
answers without it (`SqliteDatabase.write_if_free`), and the next process counts again.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

import structlog

from memlane.application.ports.index_store import StoreError, VectorProgress

log = structlog.get_logger()

_KEY = "vector_progress:"  # + model -> "<state> <done> <total>"


def key(model: str) -> str:
    return _KEY + model


def _state_text(state: tuple[Hashable, Hashable]) -> str:
    return f"{state[0]}/{state[1]}"


def encode(state: tuple[Hashable, Hashable], progress: VectorProgress) -> str:
    return f"{_state_text(state)} {progress.done} {progress.total}"


def decode(value: str | None, state: tuple[Hashable, Hashable]) -> VectorProgress | None:
    """The counts a note holds for `state`; None for another state, no note or a bad one."""
    parts = (value or "").split()
    if len(parts) != 3 or parts[0] != _state_text(state):
        return None
    try:
        return VectorProgress(done=int(parts[1]), total=int(parts[2]))
    except ValueError:
        return None


def record(
    write: Callable[[str, str], None],
    model: str,
    state: tuple[Hashable, Hashable],
    progress: VectorProgress,
) -> None:
    """Write the note of a count made at `state` through the store's `write(key, value)` (its
    meta note, adapters/piece_walk.py `BacklogStore.record`), once the read has ended; a store
    that cannot write it counts again in its next process."""
    try:
        write(key(model), encode(state, progress))
    except StoreError as exc:
        log.info("vector_progress_not_recorded", error=str(exc))
