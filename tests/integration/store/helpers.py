"""Shared builders and consistency checks for the SQLite store integration tests."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import sqlean
import sqlite_vec

from memlane.adapters.store.fts5_numbers import read_varint
from memlane.application.ports.index_store import IndexedFile
from memlane.domain.chunks import Chunk, ChunkId, ContentHash
from memlane.domain.sources import Source

DIMS = 8


def make_file(path: str, source: Source = "memory", version: str = "v1") -> IndexedFile:
    return IndexedFile(
        source=source, path=path, hash=ContentHash(f"{path}@{version}"), mtime=1.0, size=10
    )


def make_chunks(
    path: str, count: int, version: str = "v1", source: Source = "memory"
) -> list[Chunk]:
    return [
        Chunk(
            id=ChunkId(f"{path}#{version}#{i}"),
            source=source,
            path=path,
            start_line=i + 1,
            end_line=i + 1,
            text=f"note {version} about topic{i} in {path.replace('/', ' ')}",
            hash=ContentHash(f"{path}@{version}#{i}"),
        )
        for i in range(count)
    ]


def make_vectors(count: int, seed: int) -> list[list[float] | None]:
    return [[float((seed + i + j) % 7) + 0.5 for j in range(DIMS)] for i in range(count)]


def raw_connect(path: Path) -> sqlite3.Connection:
    """A plain connection with sqlite-vec loaded, for checks below the adapter."""
    conn: sqlite3.Connection = sqlean.connect(str(path))
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    return conn


def consistency(path: Path) -> dict[str, int]:
    """Counts that must agree in a healthy index; raises AssertionError otherwise."""
    conn = raw_connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
        fts = conn.execute("SELECT count(*) FROM chunks_fts").fetchone()[0]
        missing_fts = conn.execute(
            "SELECT count(*) FROM chunks WHERE rid NOT IN (SELECT rowid FROM chunks_fts)"
        ).fetchone()[0]
        with_vectors = conn.execute(
            "SELECT count(*) FROM chunks WHERE embedding IS NOT NULL"
        ).fetchone()[0]
        has_vec = conn.execute(
            "SELECT count(*) FROM sqlite_master WHERE name = 'chunks_vec'"
        ).fetchone()[0]
        vec = conn.execute("SELECT count(*) FROM chunks_vec").fetchone()[0] if has_vec else 0
        missing_vec = (
            conn.execute(
                "SELECT count(*) FROM chunks WHERE embedding IS NOT NULL "
                "AND rid NOT IN (SELECT rowid FROM chunks_vec)"
            ).fetchone()[0]
            if has_vec
            else with_vectors
        )
        statistics = keyword_statistics(conn)
        orphans = conn.execute(
            "SELECT count(*) FROM chunks c WHERE NOT EXISTS "
            "(SELECT 1 FROM files f WHERE f.source = c.source AND f.path = c.path)"
        ).fetchone()[0]
    finally:
        conn.close()
    assert (chunks, missing_fts) == (fts, 0)
    assert (with_vectors, missing_vec) == (vec, 0)
    assert orphans == 0
    # bm25 reads N and the token total from FTS5's averages record: it must count the live rows.
    assert statistics["recorded"] == statistics["live"], statistics
    return {"chunks": chunks, "fts": fts, "vec": vec}


def keyword_statistics(conn: sqlite3.Connection) -> dict[str, tuple[int, int]]:
    """(rows, tokens) as FTS5's averages record says ("recorded") and as its rows add up."""
    block = conn.execute("SELECT block FROM chunks_fts_data WHERE id = 1").fetchone()
    recorded = (0, 0)
    if block is not None and block[0]:
        n_rows, at = read_varint(bytes(block[0]), 0)
        recorded = (n_rows, read_varint(bytes(block[0]), at)[0])
    sizes = [
        read_varint(bytes(sz), 0)[0] for (sz,) in conn.execute("SELECT sz FROM chunks_fts_docsize")
    ]
    return {"recorded": recorded, "live": (len(sizes), sum(sizes))}
