"""Adapter plumbing: the three writes of chunk rows, each inside the store's one transaction.

A file's rows replaced, a file's rows deleted and vectors set on existing chunks all touch the
same tables (files, chunks and their keyword rows, the vec0 mirror, the note pieces) and bump the
write counter; each also says what it changed of the vector progress count this process keeps
(`vector_progress.Change`), so `status` after a sync need not count a million rows again. They
are apart from sqlite_index_store.py, which checks the input and holds the transaction, because
this is the work inside it, and the three must change the counts by the same rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy import Connection

from memlane.adapters.store import chunk_pieces, meta_table, rows
from memlane.adapters.store import vector_progress as progress_counts
from memlane.adapters.store.vec0 import Vec0Table
from memlane.application.ports.embedding import Vector
from memlane.application.ports.index_store import IndexedFile
from memlane.domain.chunks import Chunk, ChunkId
from memlane.domain.index_meta import KEYWORD_ONLY_MODEL
from memlane.domain.sources import Source


def replace_file(
    conn: Connection,
    vec0: Vec0Table,
    progress: progress_counts.ProgressCounts,
    file: IndexedFile,
    chunks: Sequence[Chunk],
    vectors: Sequence[Vector | None],
    model: str,
    dims: int | None,
) -> progress_counts.Change | None:
    """Replace every row of one file; what it changed of the kept counts, if any are kept."""
    before = progress_counts.version(conn)
    counted = progress.model_at(before)
    vec0.ensure_dims(conn, dims)
    old = rows.file_rids(conn, file.source, file.path)
    gone = None if counted is None else progress_counts.rows_with(conn, old, counted)
    lost = chunk_pieces.file_ids(conn, file.source, file.path) - {c.id for c in chunks}
    chunk_pieces.delete(conn, sorted(lost))
    rows.delete_rids(conn, old, vec0)
    rows.insert_chunks(
        conn,
        [(c, v, model) for c, v in zip(chunks, vectors, strict=True)],
        rows.now(conn),
        vec0,
    )
    rows.put_file(conn, file)
    meta_table.bump_generation(conn)
    if counted is None or gone is None:
        return None
    labels = [model if v is not None else KEYWORD_ONLY_MODEL for v in vectors]
    added = labels.count(counted)
    return progress_counts.Change(
        before=before,
        after=progress_counts.version(conn),
        model=counted,
        done=added - gone.done,
        total=len(chunks) - gone.total,
    )


def delete_file(
    conn: Connection,
    vec0: Vec0Table,
    progress: progress_counts.ProgressCounts,
    source: Source,
    path: str,
) -> progress_counts.Change | None:
    """Remove every row of one file (nothing when it is not indexed)."""
    before = progress_counts.version(conn)
    counted = progress.model_at(before)
    old = rows.file_rids(conn, source, path)
    gone = None if counted is None else progress_counts.rows_with(conn, old, counted)
    chunk_pieces.delete(conn, sorted(chunk_pieces.file_ids(conn, source, path)))
    rows.delete_rids(conn, old, vec0)
    rows.delete_file(conn, source, path)
    meta_table.bump_generation(conn)
    if counted is None or gone is None:
        return None
    after = progress_counts.version(conn)
    return progress_counts.Change(before, after, counted, -gone.done, -gone.total)


def set_vectors(
    conn: Connection,
    vec0: Vec0Table,
    progress: progress_counts.ProgressCounts,
    model: str,
    vectors: Mapping[ChunkId, Vector],
    size: int,
) -> progress_counts.Change | None:
    """Attach vectors to existing chunks (unknown ids are ignored); a chunk whose vector changes
    is re-inserted under a new rid (see vector_matrix.py)."""
    before = progress_counts.version(conn)
    counted = progress.model_at(before)
    vec0.ensure_dims(conn, size)
    found = rows.chunks_by_id(conn, list(vectors))
    rids = [rid for rid, _ in found]
    had = None if counted is None else progress_counts.rows_with(conn, rids, counted)
    rows.delete_rids(conn, rids, vec0)
    rows.insert_chunks(
        conn,
        [(chunk, vectors[chunk.id], model) for _, chunk in found],
        rows.now(conn),
        vec0,
    )
    meta_table.bump_generation(conn)
    if counted is None or had is None:
        return None
    gained = (len(found) if model == counted else 0) - had.done
    return progress_counts.Change(before, progress_counts.version(conn), counted, gained, 0)
