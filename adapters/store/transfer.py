"""Adapter: IndexTransfer of one agent's SQLite file (`memlane store copy`, both directions).

Added for moving indexes between families; the store's own behaviour does not depend on it.
Reads stream in the order the port promises. `load` writes the whole index in one
BEGIN IMMEDIATE transaction through the same row helpers the store uses (chunks get fresh rids,
FTS5 and vec0 rows included), keeps event positions and sets the AUTOINCREMENT high-water mark
of `events` to the source's, so positions are never reused. Cache recency is kept as an order:
entries get `last_used` 1, 2, 3... in the order they arrive (least recent first).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import cast

from sqlalchemy import Connection

from memlane.adapters.store import meta_table, rows
from memlane.adapters.store.database import SqliteDatabase
from memlane.adapters.store.temp_files import remove_files
from memlane.adapters.store.vec0 import Vec0Table
from memlane.adapters.store.vector_codec import from_blob, to_blob
from memlane.application.ports.index_store import CacheKey
from memlane.application.ports.index_transfer import (
    CacheRecord,
    ChunkRecord,
    IndexSnapshot,
    StoredEvent,
    TransferCounts,
    TransferTargetNotEmpty,
)
from memlane.domain.chunks import Chunk, ChunkId, ContentHash
from memlane.domain.index_meta import index_meta_from_json, index_meta_to_json
from memlane.domain.sources import Source

_BATCH = 500


def agents(state_dir: Path) -> list[str]:
    """Return the agents with an index file in the default layout of `state_dir`."""
    return sorted(p.parent.name for p in (state_dir / "agents").glob("*/memory.db"))


class SqliteIndexTransfer:
    """Bulk read and write of one SQLite index file."""

    def __init__(self, db: SqliteDatabase) -> None:
        """Move the index in `db`."""
        self._db = db
        self._vec0 = Vec0Table(db)

    @classmethod
    def open(cls, path: Path) -> SqliteIndexTransfer:
        """Open (creating, with its directory) the index file at `path`."""
        path.parent.mkdir(parents=True, exist_ok=True)
        return cls(SqliteDatabase.open(path))

    def counts(self) -> TransferCounts:
        """Return what the file holds."""
        with self._db.read() as conn:

            def count(sql: str) -> int:
                return int(conn.exec_driver_sql(sql).scalar_one())

            return TransferCounts(
                files=count("SELECT count(*) FROM files"),
                chunks=count("SELECT count(*) FROM chunks"),
                vectors=count("SELECT count(*) FROM chunks WHERE embedding IS NOT NULL"),
                cache=count("SELECT count(*) FROM embedding_cache"),
                events=count("SELECT count(*) FROM events"),
                last_position=_last_position(conn),
                tracking=count("SELECT count(*) FROM tracking"),
            )

    def snapshot(self) -> IndexSnapshot:
        """Return meta, files, events, last position and tracking."""
        with self._db.read() as conn:
            value = meta_table.get(conn, meta_table.INDEX_META_KEY)
            return IndexSnapshot(
                meta=None if value is None else index_meta_from_json(value),
                files=rows.files(conn, None),
                events=[
                    StoredEvent(int(p), str(t), int(v), str(d), str(o))
                    for p, t, v, d, o in conn.exec_driver_sql(
                        "SELECT position, type, version, data, occurred_at FROM events "
                        "ORDER BY position"
                    )
                ],
                last_position=_last_position(conn),
                tracking={
                    str(h): int(p)
                    for h, p in conn.exec_driver_sql("SELECT handler, position FROM tracking")
                },
            )

    def chunks(self) -> Iterator[ChunkRecord]:
        """Yield every chunk with its vector, file by file."""
        with self._db.read() as conn:
            for row in conn.exec_driver_sql(
                "SELECT id, source, path, start_line, end_line, text, hash, timestamp, model, "
                "embedding, time_start, time_end, context FROM chunks ORDER BY source, path, rid"
            ):
                r = tuple(row)
                yield ChunkRecord(
                    chunk=_chunk(r),
                    vector=None if r[9] is None else from_blob(bytes(r[9])),
                    model=str(r[8]),
                )

    def cache(self) -> Iterator[CacheRecord]:
        """Yield every cache entry, least recently used first."""
        with self._db.read() as conn:
            for provider, model, key, h, blob in conn.exec_driver_sql(
                "SELECT provider, model, provider_key, hash, embedding FROM embedding_cache "
                "ORDER BY last_used, rowid"
            ):
                yield CacheRecord(
                    CacheKey(str(provider), str(model), str(key)),
                    ContentHash(str(h)),
                    from_blob(bytes(blob)),
                )

    def load(
        self, snapshot: IndexSnapshot, chunks: Iterator[ChunkRecord], cache: Iterator[CacheRecord]
    ) -> None:
        """Write a whole index in one transaction; TransferTargetNotEmpty if one exists."""

        def work(conn: Connection) -> None:
            taken = conn.exec_driver_sql(
                "SELECT EXISTS (SELECT 1 FROM files) OR EXISTS (SELECT 1 FROM events) "
                "OR EXISTS (SELECT 1 FROM chunks)"
            ).scalar_one()
            if taken:
                raise TransferTargetNotEmpty(f"{self._db.path} already holds an index")
            if snapshot.meta is not None:
                meta_table.put(conn, meta_table.INDEX_META_KEY, index_meta_to_json(snapshot.meta))
            for file in snapshot.files:
                rows.put_file(conn, file)
            self._load_chunks(conn, chunks)
            _load_cache(conn, cache)
            _load_events(conn, snapshot)
            meta_table.bump_generation(conn)

        self._db.write(work)

    def _load_chunks(self, conn: Connection, chunks: Iterator[ChunkRecord]) -> None:
        now = rows.now(conn)
        batch: list[ChunkRecord] = []

        def flush() -> None:
            for d in {len(r.vector) for r in batch if r.vector is not None}:
                self._vec0.ensure_dims(conn, d)
            rows.insert_chunks(conn, [(r.chunk, r.vector, r.model) for r in batch], now, self._vec0)
            batch.clear()

        for record in chunks:
            batch.append(record)
            if len(batch) >= _BATCH:
                flush()
        if batch:
            flush()

    def remove(self) -> None:
        """Delete the index file (with its side files, and its agent folder when left empty).

        The file is the agent's whole index, and a copy only undoes an agent whose file held
        no index before it (the copy checks first), so nothing of earlier is lost with it.
        """
        path = self._db.path
        self._db.close()
        remove_files(path)
        with contextlib.suppress(OSError):  # a folder holding other files stays, as it should
            path.parent.rmdir()

    def how_to_remove(self) -> str:
        """Delete the file by hand."""
        return f"delete {self._db.path} and its -wal and -shm files"

    def close(self) -> None:
        """Release connections; idempotent."""
        self._db.close()


def _chunk(r: tuple[object, ...]) -> Chunk:
    return Chunk(
        id=ChunkId(str(r[0])),
        source=cast(Source, r[1]),
        path=str(r[2]),
        start_line=int(str(r[3])),
        end_line=int(str(r[4])),
        text=str(r[5]),
        hash=ContentHash(str(r[6])),
        timestamp=None if r[7] is None else float(str(r[7])),
        time_start=None if r[10] is None else float(str(r[10])),
        time_end=None if r[11] is None else float(str(r[11])),
        context=str(r[12]),
    )


def _last_position(conn: Connection) -> int:
    return int(
        conn.exec_driver_sql(
            "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0)"
        ).scalar_one()
    )


def _load_cache(conn: Connection, cache: Iterator[CacheRecord]) -> None:
    entries = [
        (r.key.provider, r.key.model, r.key.provider_key, r.hash, to_blob(r.vector), len(r.vector))
        for r in cache
    ]
    if entries:
        conn.exec_driver_sql(
            "INSERT INTO embedding_cache(provider, model, provider_key, hash, embedding, dims, "
            "last_used) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(*entry, n) for n, entry in enumerate(entries, start=1)],
        )


def _load_events(conn: Connection, snapshot: IndexSnapshot) -> None:
    if snapshot.events:
        conn.exec_driver_sql(
            "INSERT INTO events(position, type, version, data, occurred_at) VALUES (?, ?, ?, ?, ?)",
            [(e.position, e.type, e.version, e.data, e.occurred_at) for e in snapshot.events],
        )
    conn.exec_driver_sql("DELETE FROM sqlite_sequence WHERE name = 'events'")
    conn.exec_driver_sql(
        "INSERT INTO sqlite_sequence(name, seq) VALUES ('events', ?)", (snapshot.last_position,)
    )
    if snapshot.tracking:
        conn.exec_driver_sql(
            "INSERT INTO tracking(handler, position) VALUES (?, ?)",
            list(snapshot.tracking.items()),
        )
