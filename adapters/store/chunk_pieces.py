"""Adapter plumbing: the piece vectors of note chunks (domain/note_pieces.py) in SQLite.

One row per chunk and model, every piece's float32 vector in one blob. Rows are keyed by the
chunk's id, which hashes its text, so a row stays right for as long as a chunk of that id exists;
the store deletes the rows of the chunks a file loses. A rebuild starts a new file without them,
and the vector backfill makes them again, through the embedding cache.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy import Connection

from memlane.adapters.index_rows import chunk_from_row
from memlane.adapters.store.in_lists import batches, placeholders
from memlane.application.ports.embedding import Vector
from memlane.domain.chunks import Chunk, ChunkId
from memlane.domain.note_pieces import PIECED_SOURCES

TABLE = "chunk_pieces"


def put(conn: Connection, model: str, pieces: Mapping[ChunkId, Sequence[Vector]]) -> None:
    """Store each chunk's piece vectors for `model` (replacing what it had)."""
    import numpy as np  # here, not at the top: a keyword-only command never loads it

    values = [
        (cid, model, len(vs), np.asarray(vs, dtype="<f4").tobytes())
        for cid, vs in pieces.items()
        if vs
    ]
    if values:
        conn.exec_driver_sql(
            f"INSERT OR REPLACE INTO {TABLE} (chunk_id, model, pieces, vectors) "
            "VALUES (?, ?, ?, ?)",
            values,
        )


def delete(conn: Connection, ids: Sequence[str]) -> None:
    for batch in batches(ids):
        conn.exec_driver_sql(
            f"DELETE FROM {TABLE} WHERE chunk_id IN ({placeholders(len(batch))})", tuple(batch)
        )


def file_ids(conn: Connection, source: str, path: str) -> set[str]:
    rows = conn.exec_driver_sql(
        "SELECT id FROM chunks WHERE source = ? AND path = ?", (source, path)
    ).all()
    return {str(r[0]) for r in rows}


def missing(
    conn: Connection, model: str, columns: str, limit: int, *, after: int = 0
) -> list[tuple[int, Chunk]]:
    """(rid, chunk) of the note chunks after rid `after` with a vector of `model` but no pieces
    of it, oldest rid first (the walk starts at `after`, so a backfill never scans the rows it
    has done again)."""
    sources = sorted(PIECED_SOURCES)
    rows = conn.exec_driver_sql(
        f"SELECT c.rid, {columns} FROM chunks c WHERE c.rid > ? "
        f"AND c.source IN ({placeholders(len(sources))}) "
        "AND c.model = ? AND c.embedding IS NOT NULL AND NOT EXISTS "
        f"(SELECT 1 FROM {TABLE} p WHERE p.chunk_id = c.id AND p.model = ?) "
        "ORDER BY c.rid LIMIT ?",
        (after, *sources, model, model, max(0, limit)),
    ).all()
    return [(int(r[0]), chunk_from_row(tuple(r)[1:])) for r in rows]


def cosines(
    conn: Connection, query: Vector, model: str, ids: Sequence[str]
) -> dict[ChunkId, tuple[float, float | None]]:
    """(cosine, best piece's cosine or None) of each id with a vector of `model`."""
    import numpy as np

    q = np.asarray(query, dtype=np.float32)
    q /= float(np.linalg.norm(q)) or 1.0
    out: dict[ChunkId, tuple[float, float | None]] = {}
    for batch in batches(ids):
        rows = conn.exec_driver_sql(
            f"SELECT c.id, c.embedding, p.vectors FROM chunks c LEFT JOIN {TABLE} p "
            "ON p.chunk_id = c.id AND p.model = c.model "
            f"WHERE c.model = ? AND c.embedding IS NOT NULL AND c.id IN "
            f"({placeholders(len(batch))})",
            (model, *batch),
        ).all()
        for cid, blob, pieces in rows:
            cosine = float(np.frombuffer(blob, dtype="<f4") @ q)
            best = None
            if pieces is not None:
                matrix = np.frombuffer(pieces, dtype="<f4").reshape(-1, q.shape[0])
                best = float((matrix @ q).max())
            out[ChunkId(str(cid))] = (cosine, best)
    return out
