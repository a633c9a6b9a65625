"""Adapter plumbing: the rows of `files`, `chunks` and the FTS5 keyword table, read and written.

Every function runs inside the caller's transaction. A chunk's keyword row (and vec0 row, via
`Vec0Table`) carries the chunk's rid, so a chunk and its derived rows are written and deleted
together. A changed vector is a delete plus an insert under a fresh rid, never an update: the
in-process vector matrix relies on that to refresh incrementally.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from sqlalchemy import Connection

from memlane.adapters.index_rows import candidate_from_row, chunk_from_row, file_from_row
from memlane.adapters.store import schema, time_span
from memlane.adapters.store.database import DRIVER_ERRORS
from memlane.adapters.store.in_lists import batches, placeholders
from memlane.adapters.store.vec0 import Vec0Table
from memlane.adapters.store.vector_codec import to_blob
from memlane.application.ports.embedding import Vector
from memlane.application.ports.index_store import IndexedFile, SourceCount
from memlane.domain.chunks import Chunk, ContentHash
from memlane.domain.index_meta import KEYWORD_ONLY_MODEL
from memlane.domain.keywords import fts_document
from memlane.domain.search import Candidate, TimeWindow
from memlane.domain.sources import Source

# Deleted-vector rids kept for other processes' matrices; one that fell further behind reloads.
_DELETION_LOG_KEPT = 200_000
CHUNK_COLUMNS = (
    "id, source, path, start_line, end_line, text, hash, timestamp, time_start, time_end, context"
)
_FILE_COLUMNS = "source, path, hash, mtime, size"
_CANDIDATE_COLUMNS = (
    "c.rid, c.id, c.source, c.path, c.start_line, c.end_line, c.text, c.timestamp, f.mtime, "
    "c.time_start, c.time_end"
)
# Messages of the errors FTS5 raises for a malformed MATCH expression (the port promises []).
_FTS_QUERY_ERRORS = ("fts5", "syntax error", "no such column", "unterminated", "unknown special")


def now(conn: Connection) -> float:
    """Return the database's clock (adapters get no clock of their own here)."""
    return float(conn.exec_driver_sql("SELECT unixepoch('subsec')").scalar_one())


# --- writes ------------------------------------------------------------------------------------


def _next_rid(conn: Connection) -> int:
    row = conn.exec_driver_sql(
        "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'chunks'), 0), "
        "coalesce((SELECT max(rid) FROM chunks), 0))"
    ).one()
    return int(row[0]) + 1


def file_rids(conn: Connection, source: str, path: str) -> list[int]:
    """Return the rids of one file's chunks."""
    rows = conn.exec_driver_sql(
        "SELECT rid FROM chunks WHERE source = ? AND path = ?", (source, path)
    ).all()
    return [int(r[0]) for r in rows]


def delete_rids(conn: Connection, rids: Sequence[int], vec: Vec0Table) -> None:
    """Delete chunks with their keyword and vec0 rows, logging the rids that had vectors."""
    if not rids:
        return
    vec_ready = vec.ready(conn)
    if not vec_ready and schema.table_exists(conn, schema.VEC_TABLE):
        vec.mark_stale(conn)
    for batch in batches(rids):
        marks = placeholders(len(batch))
        delete_keyword_rows(conn, batch)
        if vec_ready:
            conn.exec_driver_sql(
                f"DELETE FROM {schema.VEC_TABLE} WHERE rowid IN ({marks})", tuple(batch)
            )
        conn.exec_driver_sql(
            "INSERT INTO vector_deletions(rid) SELECT rid FROM chunks "
            f"WHERE rid IN ({marks}) AND embedding IS NOT NULL",
            tuple(batch),
        )
        conn.exec_driver_sql(f"DELETE FROM chunks WHERE rid IN ({marks})", tuple(batch))
    conn.exec_driver_sql(
        "DELETE FROM vector_deletions WHERE seq <= (SELECT max(seq) FROM vector_deletions) - ?",
        (_DELETION_LOG_KEPT,),
    )


def delete_keyword_rows(conn: Connection, rids: Sequence[object]) -> None:
    """Delete the keyword rows of chunks that still exist, keeping bm25's statistics exact.

    FTS5's 'delete' command takes the document the row was built from, recomputed here from the
    chunk's trail and text (`FTS_DOCUMENT_VERSION` guarantees it is the same document), and
    takes it out of the row count and token total as well as the postings.
    """
    texts = conn.exec_driver_sql(
        f"SELECT rid, {schema.INDEXED_TEXT} FROM chunks WHERE rid IN ({placeholders(len(rids))})",
        tuple(rids),
    ).all()
    if texts:
        conn.exec_driver_sql(
            f"INSERT INTO {schema.FTS_TABLE}({schema.FTS_TABLE}, rowid, terms) "
            "VALUES ('delete', ?, ?)",
            [(int(rid), fts_document(str(text))) for rid, text in texts],
        )


def insert_chunks(
    conn: Connection,
    rows: Sequence[tuple[Chunk, Vector | None, str]],
    updated_at: float,
    vec: Vec0Table,
) -> None:
    """Insert (chunk, vector, model) rows with fresh rids plus their keyword and vec0 rows."""
    if not rows:
        return
    first = _next_rid(conn)
    chunk_rows = []
    fts_rows = []
    vec_rows = []
    for offset, (chunk, vector, model) in enumerate(rows):
        rid = first + offset
        blob = None if vector is None else to_blob(vector)
        chunk_rows.append(
            (
                rid,
                chunk.id,
                chunk.source,
                chunk.path,
                chunk.start_line,
                chunk.end_line,
                chunk.hash,
                chunk.text,
                model if blob is not None else KEYWORD_ONLY_MODEL,
                blob,
                chunk.timestamp,
                updated_at,
                chunk.time_start,
                chunk.time_end,
                chunk.context,
            )
        )
        fts_rows.append((rid, fts_document(chunk.indexed_text)))
        if blob is not None:
            vec_rows.append((rid, blob))
    conn.exec_driver_sql(
        "INSERT INTO chunks(rid, id, source, path, start_line, end_line, hash, text, model, "
        "embedding, timestamp, updated_at, time_start, time_end, context) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        chunk_rows,
    )
    conn.exec_driver_sql(f"INSERT INTO {schema.FTS_TABLE}(rowid, terms) VALUES (?, ?)", fts_rows)
    vec.insert(conn, vec_rows)


def put_file(conn: Connection, file: IndexedFile) -> None:
    """Insert or replace one `files` row."""
    conn.exec_driver_sql(
        "INSERT INTO files(source, path, hash, mtime, size) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT(source, path) DO UPDATE SET hash = excluded.hash, "
        "mtime = excluded.mtime, size = excluded.size",
        (file.source, file.path, file.hash, file.mtime, file.size),
    )


def touch_file(conn: Connection, file: IndexedFile) -> None:
    """Update mtime and size of one `files` row (no-op if absent)."""
    conn.exec_driver_sql(
        "UPDATE files SET mtime = ?, size = ? WHERE source = ? AND path = ?",
        (file.mtime, file.size, file.source, file.path),
    )


def delete_file(conn: Connection, source: Source, path: str) -> None:
    """Delete one `files` row (its chunks are deleted by `delete_rids`)."""
    conn.exec_driver_sql("DELETE FROM files WHERE source = ? AND path = ?", (source, path))


# --- reads -------------------------------------------------------------------------------------


def file(conn: Connection, source: Source, path: str) -> IndexedFile | None:
    """Return one `files` row, or None."""
    row = conn.exec_driver_sql(
        f"SELECT {_FILE_COLUMNS} FROM files WHERE source = ? AND path = ?", (source, path)
    ).first()
    return None if row is None else file_from_row(tuple(row))


def files(conn: Connection, source: Source | None) -> list[IndexedFile]:
    """Return the `files` rows (of one source, or all), sorted by source then path.

    Read through the driver's own cursor, in the same transaction: each scan before a CLI
    search reads every row, and SQLAlchemy's result rows cost 2.5x the fetch (50,000 files:
    0.50 s against 0.19 s).
    """
    sql = f"SELECT {_FILE_COLUMNS} FROM files"
    args: tuple[str, ...] = ()
    if source is not None:
        sql += " WHERE source = ?"
        args = (source,)
    driver = conn.connection.driver_connection
    assert driver is not None  # a connection checked out of the pool has one
    rows = driver.execute(sql + " ORDER BY source, path", args).fetchall()
    return [
        IndexedFile(source=s, path=p, hash=ContentHash(h), mtime=float(m), size=int(z))
        for s, p, h, m, z in rows
    ]


def counts(conn: Connection) -> list[SourceCount]:
    """Return files and chunks per source present in the index."""
    file_counts: dict[str, int] = {
        str(s): int(n)
        for s, n in conn.exec_driver_sql("SELECT source, count(*) FROM files GROUP BY source")
    }
    chunk_counts: dict[str, int] = {
        str(s): int(n)
        for s, n in conn.exec_driver_sql("SELECT source, count(*) FROM chunks GROUP BY source")
    }
    return [
        SourceCount(cast(Source, s), int(file_counts.get(s, 0)), int(chunk_counts.get(s, 0)))
        for s in sorted(set(file_counts) | set(chunk_counts))
    ]


def chunks_by_id(conn: Connection, ids: Sequence[str]) -> list[tuple[int, Chunk]]:
    """Return (rid, chunk) for the ids found, in no particular order."""
    found: list[tuple[int, Chunk]] = []
    for batch in batches(ids):
        rows = conn.exec_driver_sql(
            f"SELECT rid, {CHUNK_COLUMNS} FROM chunks WHERE id IN ({placeholders(len(batch))})",
            tuple(batch),
        ).all()
        found.extend((int(r[0]), chunk_from_row(tuple(r)[1:])) for r in rows)
    return found


def chunks_without_vectors(conn: Connection, model: str, limit: int) -> list[Chunk]:
    """Return chunks whose vector is missing or was made by another model, oldest rid first."""
    rows = conn.exec_driver_sql(
        f"SELECT {CHUNK_COLUMNS} FROM chunks "
        "WHERE embedding IS NULL OR model != ? ORDER BY rid LIMIT ?",
        (model, max(0, limit)),
    ).all()
    return [chunk_from_row(tuple(r)) for r in rows]


def candidates(conn: Connection, scored: Sequence[tuple[int, float]]) -> list[Candidate]:
    """Turn (rid, score) pairs into Candidates, in the same order (vanished rids are skipped)."""
    if not scored:
        return []
    rids = [rid for rid, _ in scored]
    rows: dict[int, tuple[object, ...]] = {}
    for batch in batches(rids):
        for found in conn.exec_driver_sql(
            f"SELECT {_CANDIDATE_COLUMNS} FROM chunks c LEFT JOIN files f "
            "ON f.source = c.source AND f.path = c.path "
            f"WHERE c.rid IN ({placeholders(len(batch))})",
            tuple(batch),
        ):
            rows[int(found[0])] = tuple(found)
    result = []
    for rid, score in scored:
        row = rows.get(rid)
        if row is None:
            continue
        result.append(candidate_from_row(row, score))
    return result


def rids_in_window(conn: Connection, window: TimeWindow) -> list[int]:
    """Rids of the chunks written within `window`, ascending.

    Only the time columns are read, so SQLite answers from `idx_chunks_time` alone (a filter
    on model or source here made it scan the table, vectors included: 280 ms at 100k chunks
    for a one-day window); the vector engines check model and source themselves. The third
    bound (time_span.py) ends the walk after the window, not at the newest chunk.
    """
    found = conn.exec_driver_sql(
        "SELECT rid FROM chunks INDEXED BY idx_chunks_time "
        "WHERE time_end >= ? AND time_start <= ? AND time_end <= ?",
        time_span.bounds(conn, window),
    )
    return sorted(int(r[0]) for r in found)


def window_rows_at_most(conn: Connection, window: TimeWindow, cap: int) -> int:
    """The chunks written within `window`, counted on `idx_chunks_time` up to `cap` (what
    choosing a plan needs, without walking a wide window's every entry)."""
    found = conn.exec_driver_sql(
        "SELECT count(*) FROM (SELECT 1 FROM chunks INDEXED BY idx_chunks_time "
        "WHERE time_end >= ? AND time_start <= ? AND time_end <= ? LIMIT ?)",
        (*time_span.bounds(conn, window), cap),
    ).scalar_one()
    return int(found)


def rids_within(conn: Connection, rids: Sequence[int], window: TimeWindow) -> set[int]:
    """Those of `rids` whose chunk was written within `window` (read by rid: a few rows)."""
    since, until = window.bounds()
    inside: set[int] = set()
    for batch in batches(rids):
        found = conn.exec_driver_sql(
            f"SELECT rid FROM chunks WHERE rid IN ({placeholders(len(batch))}) "
            "AND time_end >= ? AND time_start <= ?",
            (*batch, since, until),
        )
        inside.update(int(r[0]) for r in found)
    return inside


def keyword_top(
    conn: Connection,
    match: str,
    sources: Sequence[Source],
    *,
    every_source: bool,
    limit: int,
    window: TimeWindow | None = None,
) -> list[tuple[int, float]]:
    """Return (rid, bm25 rank) of the best `limit` FTS5 matches, best first (ties by rid).

    FTS5 ranks every matching row; `keyword_search` prunes that, and calls this for the queries
    it does not model.

    A malformed MATCH expression gives [] (FTS5 reports it as an OperationalError).
    """
    if window is not None:
        sql = (
            f"SELECT t.rowid, t.rank FROM {schema.FTS_TABLE} t "
            "JOIN chunks c ON c.rid = t.rowid "
            f"WHERE {schema.FTS_TABLE} MATCH ? AND c.source IN ({placeholders(len(sources))}) "
            # The window's rids from the time index alone: the time columns sit after the
            # vector in a chunk's row, so reading them per match would read every vector.
            # `+` keeps FTS5 from taking the rid list as its plan (a MATCH per listed rid:
            # 112 ms against 12 for a 2,500-row window at 5k chunks).
            "AND +t.rowid IN (SELECT rid FROM chunks INDEXED BY idx_chunks_time "
            "WHERE time_end >= ? AND time_start <= ? AND time_end <= ?) "
            "ORDER BY t.rank, t.rowid LIMIT ?"
        )
        args: tuple[object, ...] = (match, *sources, *time_span.bounds(conn, window), limit)
    elif every_source:
        # Fast path: FTS5 can stop after the best `limit` rows when nothing else filters.
        sql = (
            f"SELECT rowid, rank FROM {schema.FTS_TABLE} WHERE {schema.FTS_TABLE} MATCH ? "
            "ORDER BY rank LIMIT ?"
        )
        args = (match, limit)
    else:
        sql = (
            f"SELECT t.rowid, t.rank FROM {schema.FTS_TABLE} t "
            "JOIN chunks c ON c.rid = t.rowid "
            f"WHERE {schema.FTS_TABLE} MATCH ? AND c.source IN ({placeholders(len(sources))}) "
            "ORDER BY t.rank, t.rowid LIMIT ?"
        )
        args = (match, *sources, limit)
    try:
        with conn.begin_nested():
            rows = conn.exec_driver_sql(sql, args).all()
    except DRIVER_ERRORS as exc:
        message = str(exc).lower()
        if any(marker in message for marker in _FTS_QUERY_ERRORS):
            return []
        raise
    return [(int(r[0]), float(r[1])) for r in rows]
