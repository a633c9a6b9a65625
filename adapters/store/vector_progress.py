"""SQLite: how far the vectors of one model are (the vector backfill's progress), counted once
per state of the database.

A chunk without a vector is stored with the keyword-only model label, so "has a vector of
model M" is exactly `model = M`, and both counts are answered from the `idx_chunks_model`
index without reading a chunk row. The range scan still reads every missing entry: ~90 ms at
100k chunks with every vector missing (bench/RESULTS.md), which every search during a backfill
would pay. So the count is kept (`ProgressCounts`) for the database state it was made in, named
by `db_id` and the `vector_generation` counter that every write of chunk rows bumps (one
primary-key read to check); this process's own writes carry it forward from the rows they
change, so a search between two backfill batches, or during a first index, recounts nothing.
A write by another process moves the generation: the next call counts again. A count made here
is also written to the meta table for the next process (adapters/progress_notes.py): every CLI
command without the daemon is one, and each counted every chunk (6 ms at 1M when quiet).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection

from memlane.adapters import progress_notes
from memlane.adapters.store import meta_table
from memlane.adapters.store.in_lists import batches, placeholders
from memlane.application.ports.index_store import VectorProgress

# (db_id, vector generation): a committed state of the chunk rows.
Version = tuple[str, str]


def vector_progress(conn: Connection, model: str) -> VectorProgress:
    """Count the chunks with a vector of `model`, and all chunks, in the caller's snapshot."""
    # Two index range scans around `model` cost what is missing, not what is done.
    missing = conn.exec_driver_sql(
        "SELECT count(*) FROM chunks WHERE model < ? OR model > ?", (model, model)
    ).scalar_one()
    total = conn.exec_driver_sql("SELECT count(*) FROM chunks").scalar_one()
    return VectorProgress(done=int(total) - int(missing), total=int(total))


def version(conn: Connection) -> Version:
    """The state of the chunk rows in the caller's snapshot."""
    keys = meta_table.get_many(conn, [meta_table.DB_ID_KEY, meta_table.GENERATION_KEY])
    return keys.get(meta_table.DB_ID_KEY, ""), keys.get(meta_table.GENERATION_KEY, "0")


def rows_with(conn: Connection, rids: Sequence[int], model: str) -> VectorProgress:
    """Of the chunks `rids`: how many have a vector of `model` (done), how many there are."""
    done = total = 0
    for batch in batches(rids):
        row = conn.exec_driver_sql(
            "SELECT count(*), coalesce(sum(model = ?), 0) FROM chunks "
            f"WHERE rid IN ({placeholders(len(batch))})",
            (model, *batch),
        ).one()
        total += int(row[0])
        done += int(row[1])
    return VectorProgress(done=done, total=total)


@dataclass(frozen=True, slots=True)
class Change:
    """What one committed write did to the counts of `model`, from state `before` to `after`."""

    before: Version
    after: Version
    model: str
    done: int  # vectors of `model` gained (negative: lost)
    total: int  # chunks gained (negative: removed)


class ProgressCounts:
    """The last `vector_progress` count of this process, with the state it holds for.

    Thread-safe; one entry (a search and the backfill ask for the active model only).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # (state, model, counts, whether a note of them was handed out for writing)
        self._entry: tuple[Version, str, VectorProgress, bool] | None = None

    def get(self, conn: Connection, model: str) -> tuple[VectorProgress, Version | None]:
        """The counts of `model` in the caller's snapshot, counted only when it changed, and
        the state they hold for when no note of them was written yet: counted here, or carried
        over this process's own writes (a sync's last question, for its report, then leaves
        the note for the searches after it). The caller writes the note for the next process
        (adapters/progress_notes.py) once its read has ended."""
        now = version(conn)
        with self._lock:
            entry = self._entry
            if entry is not None and entry[0] == now and entry[1] == model:
                self._entry = (now, model, entry[2], True)
                return entry[2], None if entry[3] else now
        progress = progress_notes.decode(meta_table.get(conn, progress_notes.key(model)), now)
        counted: Version | None = None
        if progress is None:
            progress, counted = vector_progress(conn, model), now
        with self._lock:
            self._entry = (now, model, progress, True)
        return progress, counted

    def model_at(self, state: Version) -> str | None:
        """The model whose counts are kept for `state` (a write about to change it then says
        what it changes), None when nothing is kept for it."""
        with self._lock:
            entry = self._entry
        return entry[1] if entry is not None and entry[0] == state else None

    def committed(self, change: Change | None) -> None:
        """Carry the kept counts over a write this process committed (call after the commit:
        a rolled-back write must not move them). Without a change, or when the counts are
        of another state by now, nothing is kept; the next call counts."""
        with self._lock:
            entry = self._entry
            if (
                change is None
                or entry is None
                or (entry[0], entry[1])
                != (
                    change.before,
                    change.model,
                )
            ):
                self._entry = None
                return
            old = entry[2]
            moved = VectorProgress(done=old.done + change.done, total=old.total + change.total)
            self._entry = (change.after, change.model, moved, False)  # not noted yet

    def forget(self) -> None:
        """Drop the kept counts (the file was swapped under the store)."""
        with self._lock:
            self._entry = None
