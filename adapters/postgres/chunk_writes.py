"""Adapter plumbing: the writes of an agent's chunk rows, each inside the store's one transaction.

A file's rows replaced or deleted, and vectors set on existing chunks: the statements over
chunks, postings, note pieces and the agent's vector dimension that each write runs, in order.
The rows to insert are made before the transaction (`wire_rows`: vectors in pgvector's binary
form; the tokens come from the analyser), so a transaction never waits on Python work. They are
apart from postgres_index_store.py, which checks the input and holds the transactions, because
this is the work inside them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlalchemy import Connection

from memlane.adapters.postgres import chunk_pieces, rows
from memlane.adapters.postgres import meta as meta_rows
from memlane.adapters.postgres import vectors as vector_leg
from memlane.application.ports.embedding import Vector
from memlane.application.ports.index_store import IndexedFile
from memlane.domain.chunks import Chunk, ChunkId
from memlane.domain.sources import Source

if TYPE_CHECKING:  # pgvector is the `postgres` extra: imported when a vector is sent
    from pgvector import Vector as PgVector

Row = tuple[Chunk, "PgVector | None", str, int | None]


def wire_rows(chunks: Sequence[Chunk], vectors: Sequence[Vector | None], model: str) -> list[Row]:
    """One (chunk, vector as sent, model, dimensions) row per chunk, for `replace_file`."""
    return [
        (
            c,
            None if v is None else vector_leg.to_wire(v),
            model,
            None if v is None else len(v),
        )
        for c, v in zip(chunks, vectors, strict=True)
    ]


def replace_file(
    conn: Connection,
    agent: str,
    file: IndexedFile,
    batch: Sequence[Row],
    tokens: Sequence[Sequence[str]],
    dims: int | None,
    *,
    register: bool,
) -> None:
    """Replace every row of one file (`register`: list the agent first, see meta.py)."""
    if register:
        meta_rows.register_agent(conn, agent)
    vector_leg.ensure_dims(conn, agent, dims)
    kept = [chunk.id for chunk, *_ in batch]
    chunk_pieces.delete_lost(conn, agent, file.source, file.path, kept)
    rows.delete_file_chunks(conn, agent, file.source, file.path)
    rows.insert_chunks(conn, agent, batch, tokens, rows.now(conn))
    rows.put_file(conn, agent, file)


def delete_file(conn: Connection, agent: str, source: Source, path: str) -> None:
    """Remove every row of one file (nothing when it is not indexed)."""
    chunk_pieces.delete_lost(conn, agent, source, path)
    rows.delete_file_chunks(conn, agent, source, path)
    rows.delete_file(conn, agent, source, path)


def set_vectors(
    conn: Connection,
    agent: str,
    model: str,
    size: int,
    ids: Sequence[ChunkId],
    values: Sequence[PgVector],
) -> None:
    """Attach vectors (`values[i]` to chunk `ids[i]`, unknown ids ignored) of `size` dimensions."""
    vector_leg.ensure_dims(conn, agent, size)
    conn.exec_driver_sql(
        "UPDATE memlane_chunks c SET embedding = u.e, dims = %s, model = %s, "
        "updated_at = %s FROM unnest(%s::text[], %b::vector[]) AS u(i, e) "
        "WHERE c.agent = %s AND c.id = u.i",
        (size, model, rows.now(conn), list(ids), list(values), agent),
    )
    rows.vectors_changed(conn, agent)
