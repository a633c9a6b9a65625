"""SQLite: which note chunks still lack their piece vectors, and a "none" remembered on disk.

Finding none means scanning every note chunk (an anti-join over the chunk rows): ~0.4 s at 100k
chunks, seconds at 1M (session 24). The walk (adapters/piece_walk.py) remembers a "none" for as
long as the chunk rows do not change, but only in its process, and the CLI without a daemon is a
new process at every command: every search paid the scan. So a "none" is also written to the
meta table, with the state of the chunk rows it holds for (the database's id and the generation
every chunk write bumps; writing pieces adds none, so it does not bump it): a new process that
reads the same state skips the scan. Any chunk write moves the state and the next call scans.
"""

from __future__ import annotations

import structlog
from sqlalchemy import Connection

from memlane.adapters.piece_walk import PieceWalk
from memlane.adapters.store import chunk_pieces, meta_table, rows
from memlane.adapters.store.database import SqliteDatabase
from memlane.application.ports.index_store import StoreError
from memlane.domain.chunks import Chunk

log = structlog.get_logger()

_NONE_KEY = "pieces_complete:"  # + model -> the state at which no note chunk lacked pieces


class PieceBacklog:
    def __init__(self, db: SqliteDatabase) -> None:
        self._db = db
        self._walk = PieceWalk()

    def next(self, model: str, limit: int) -> list[Chunk]:
        """The walk's next note chunks lacking pieces of `model` (see `PieceWalk.next`)."""
        with self._db.read() as conn:
            state = _state(conn)
            if self._known_none(conn, model, state):
                return []
            found = self._walk.next(
                model,
                state,
                lambda after: chunk_pieces.missing(
                    conn, model, rows.CHUNK_COLUMNS, limit, after=after
                ),
            )
        if not found:
            self._record_none(model, state)
        return found

    def owed(self, model: str, at_most: int) -> int:
        """How many note chunks lack pieces of `model`, counted up to `at_most` from the first."""
        with self._db.read() as conn:
            state = _state(conn)
            if self._known_none(conn, model, state):
                return 0
            count = self._walk.owed(
                model,
                state,
                lambda after: chunk_pieces.missing(
                    conn, model, rows.CHUNK_COLUMNS, at_most, after=after
                ),
            )
        if not count:
            self._record_none(model, state)
        return count

    def _known_none(self, conn: Connection, model: str, state: str) -> bool:
        if self._walk.found_none(model, state):
            return True
        if meta_table.get(conn, _NONE_KEY + model) == state:
            self._walk.remember_none(model, state)
            return True
        return False

    def _record_none(self, model: str, state: str) -> None:
        """Write the "none" for other processes; a store that cannot be written (read-only)
        scans again in its next process, which is all this saves."""
        try:
            self._db.write(lambda conn: meta_table.put(conn, _NONE_KEY + model, state))
        except StoreError as exc:
            log.info("pieces_complete_not_recorded", error=str(exc))


def _state(conn: Connection) -> str:
    """The state of the chunk rows: the database's id (a rebuild makes a new one) and the
    generation every chunk write bumps."""
    keys = meta_table.get_many(conn, [meta_table.DB_ID_KEY, meta_table.GENERATION_KEY])
    return f"{keys.get(meta_table.DB_ID_KEY, '')}/{keys.get(meta_table.GENERATION_KEY, '0')}"
