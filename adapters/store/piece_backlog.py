"""SQLite's side of the piece backlog (adapters/piece_walk.py, `PieceBacklog`): the state of the
chunk rows is the database's id (a rebuild makes a new one) and the generation every chunk write
bumps; the "none" is a row of the meta table."""

from __future__ import annotations

from contextlib import AbstractContextManager

from sqlalchemy import Connection

from memlane.adapters.store import chunk_pieces, meta_table, rows, vector_progress
from memlane.adapters.store.database import SqliteDatabase
from memlane.domain.chunks import Chunk


class SqliteBacklog:
    def __init__(self, db: SqliteDatabase) -> None:
        self._db = db

    def reading(self) -> AbstractContextManager[Connection]:
        return self._db.read()

    def state(self, conn: Connection, model: str) -> str:  # noqa: ARG002 (one for all models)
        return "/".join(vector_progress.version(conn))

    def missing(
        self, conn: Connection, model: str, limit: int, after: int
    ) -> list[tuple[int, Chunk]]:
        return chunk_pieces.missing(conn, model, rows.CHUNK_COLUMNS, limit, after=after)

    def recorded(self, conn: Connection, key: str) -> str | None:
        return meta_table.get(conn, key)

    def record(self, key: str, value: str) -> None:
        # A note is not worth waiting for: skipped when another writer holds the file (the next
        # process then scans or counts again).
        self._db.write_if_free(lambda conn: meta_table.put(conn, key, value))
