"""PostgreSQL's side of the piece backlog (adapters/piece_walk.py, `PieceBacklog`): the state of
an agent's chunk rows is its keyword generation, a value of a database-wide sequence that every
chunk write (a rebuild too) takes anew, and its count of vectors of the model, which a vector
set in place moves; the "none" is a row of the agent's meta."""

from __future__ import annotations

from contextlib import AbstractContextManager

from sqlalchemy import Connection

from memlane.adapters.postgres import chunk_pieces, rows
from memlane.adapters.postgres import meta as meta_rows
from memlane.adapters.postgres.database import PostgresDatabase
from memlane.domain.chunks import Chunk


class PostgresBacklog:
    def __init__(self, db: PostgresDatabase, agent: str) -> None:
        self._db = db
        self._agent = agent

    def reading(self) -> AbstractContextManager[Connection]:
        return self._db.read()

    def state(self, conn: Connection, model: str) -> str:
        generation = rows.keyword_stats(conn, self._agent)[2]
        return f"{generation}/{rows.vector_progress(conn, self._agent, model).done}"

    def missing(
        self, conn: Connection, model: str, limit: int, after: int
    ) -> list[tuple[int, Chunk]]:
        return chunk_pieces.missing(
            conn, self._agent, model, rows.CHUNK_COLUMNS, limit, after=after
        )

    def recorded(self, conn: Connection, key: str) -> str | None:
        return meta_rows.get(conn, self._agent, key)

    def record(self, key: str, value: str) -> None:
        self._db.write(lambda conn: meta_rows.put(conn, self._agent, key, value))
