"""PostgreSQL's side of the piece backlog (adapters/piece_walk.py, `PieceBacklog`): the state of
an agent's chunk rows is its keyword generation and its vector generation, values of one
database-wide sequence that every chunk write (a rebuild too) and every vector set or dropped
in place take anew (`rows.chunk_state`); the "none" is a row of the agent's meta."""

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

    def state(self, conn: Connection, model: str) -> str:  # noqa: ARG002 (any model's vectors move it)
        generation, vectors = rows.chunk_state(conn, self._agent)
        # "v": a note of the form before migration 8 ("<generation>/<count of vectors>") never
        # reads as this state, whatever the numbers.
        return f"{generation}/v{vectors}"

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
