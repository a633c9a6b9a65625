"""Adapter plumbing: the piece vectors of note chunks (domain/note_pieces.py) in PostgreSQL.

As in SQLite (adapters/store/chunk_pieces.py): one row per agent, chunk and model, every piece's
float32 vector in one bytea; keyed by the chunk's id, which hashes its text; deleted with the
chunks a file loses; made by the vector backfill after the chunks' own vectors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from sqlalchemy import Connection

from memlane.adapters.index_rows import chunk_from_row
from memlane.application.ports.embedding import Vector
from memlane.domain.chunks import Chunk, ChunkId
from memlane.domain.note_pieces import PIECED_SOURCES


def put(
    conn: Connection, agent: str, model: str, pieces: Mapping[ChunkId, Sequence[Vector]]
) -> None:
    """Store each chunk's piece vectors for `model` (replacing what it had)."""
    values = [
        (agent, cid, model, len(vs), np.asarray(vs, dtype="<f4").tobytes())
        for cid, vs in pieces.items()
        if vs
    ]
    if values:
        conn.exec_driver_sql(
            "INSERT INTO memlane_chunk_pieces (agent, chunk_id, model, pieces, vectors) "
            "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (agent, chunk_id) DO UPDATE SET "
            "model = EXCLUDED.model, pieces = EXCLUDED.pieces, vectors = EXCLUDED.vectors",
            values,
        )


def delete_lost(
    conn: Connection, agent: str, source: str, path: str, kept: Sequence[str] = ()
) -> None:
    """Delete the pieces of one file's chunks, but those whose id is in `kept`."""
    conn.exec_driver_sql(
        "DELETE FROM memlane_chunk_pieces p USING memlane_chunks c WHERE p.agent = %s "
        "AND c.agent = %s AND c.source = %s AND c.path = %s AND p.chunk_id = c.id "
        "AND NOT (c.id = ANY(%s::text[]))",
        (agent, agent, source, path, list(kept)),
    )


def missing(
    conn: Connection, agent: str, model: str, columns: str, limit: int, *, after: int = 0
) -> list[tuple[int, Chunk]]:
    """(rid, chunk) of the agent's note chunks after rid `after` with a vector of `model` but
    no pieces of it, oldest rid first."""
    rows = conn.exec_driver_sql(
        f"SELECT c.rid, {columns} FROM memlane_chunks c WHERE c.agent = %s AND c.rid > %s "
        "AND c.source = ANY(%s::text[]) AND c.model = %s AND c.embedding IS NOT NULL "
        "AND NOT EXISTS (SELECT 1 FROM memlane_chunk_pieces p WHERE p.agent = c.agent "
        "AND p.chunk_id = c.id AND p.model = %s) ORDER BY c.rid LIMIT %s",
        (agent, after, sorted(PIECED_SOURCES), model, model, max(0, limit)),
    )
    return [(int(r[0]), chunk_from_row(tuple(r)[1:])) for r in rows]


def cosines(
    conn: Connection, agent: str, query: Vector, model: str, ids: Sequence[str]
) -> dict[ChunkId, tuple[float, float | None]]:
    """(cosine, best piece's cosine or None) of each id with a vector of `model`."""
    q = np.asarray(query, dtype=np.float32)
    q /= float(np.linalg.norm(q)) or 1.0
    rows = conn.exec_driver_sql(
        "SELECT c.id, c.embedding, p.vectors FROM memlane_chunks c LEFT JOIN "
        "memlane_chunk_pieces p ON p.agent = c.agent AND p.chunk_id = c.id AND p.model = c.model "
        "WHERE c.agent = %s AND c.model = %s AND c.embedding IS NOT NULL "
        "AND c.id = ANY(%s::text[])",
        (agent, model, list(ids)),
    )
    out: dict[ChunkId, tuple[float, float | None]] = {}
    for cid, embedding, pieces in rows:
        vector = np.asarray(embedding.to_numpy(), dtype=np.float32)
        best = None
        if pieces is not None:
            matrix = np.frombuffer(bytes(pieces), dtype="<f4").reshape(-1, q.shape[0])
            best = float((matrix @ q).max())
        out[ChunkId(str(cid))] = (float(vector @ q), best)
    return out
