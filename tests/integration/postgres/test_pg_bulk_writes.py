"""Integration: what the PostgreSQL store does after a bulk write (statistics, deferred HNSW)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from sqlalchemy import Connection

from memlane.adapters.postgres import maintenance, vectors
from memlane.adapters.postgres.database import PostgresDatabase
from memlane.adapters.postgres.postgres_index_store import PostgresIndexStore
from memlane.adapters.postgres.transfer import PostgresIndexTransfer
from memlane.application.ports.index_store import IndexedFile
from memlane.application.ports.index_transfer import ChunkRecord, IndexSnapshot
from memlane.domain.chunks import Chunk, ChunkId, ContentHash
from memlane.domain.sources import ALL_SOURCES
from tests.pg_server import fresh_database

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

DIMS = 12
ROWS = 1500  # above maintenance.MIN_CHANGED


def _load(db: PostgresDatabase, agent: str, rows: int, seed: int) -> np.ndarray:
    """Copy `rows` one-chunk files with random vectors into `agent` (store copy's path)."""
    found = np.random.default_rng(seed).normal(size=(rows, DIMS)).astype(np.float32)
    files, records = [], []
    for i, v in enumerate(found):
        path = f"memory/f{i}.md"
        files.append(IndexedFile("memory", path, ContentHash(f"f{i}"), 1.0, 1))
        chunk = Chunk(ChunkId(f"{agent}:{i}"), "memory", path, 1, 1, f"note {i} alpha",
                      ContentHash(f"h{i}"))  # fmt: skip
        records.append(ChunkRecord(chunk, v.tolist(), "m"))
    snapshot = IndexSnapshot(meta=None, files=files, events=[], last_position=0, tracking={})
    PostgresIndexTransfer(db, agent).load(snapshot, iter(records), iter([]))
    return found


def _analysed(conn: Connection) -> dict[str, bool]:
    rows = conn.exec_driver_sql(
        "SELECT relname, last_analyze IS NOT NULL FROM pg_stat_user_tables WHERE relname = ANY(%s)",
        (list(maintenance.TABLES),),
    ).all()
    return {str(name): bool(done) for name, done in rows}


def test_a_bulk_load_leaves_the_tables_analysed(pg_url: str) -> None:
    """Explicit VACUUM (ANALYZE) by the store, not autovacuum's (last_autoanalyze)."""
    db = PostgresDatabase.open(fresh_database(pg_url))
    try:
        _load(db, "bulk", ROWS, seed=1)
        # The server's change counters arrive with a delay of up to a few seconds (each backend
        # flushes its statistics at most once a second): wait for them, then refresh.
        deadline = time.monotonic() + 60
        with db.session() as conn:
            while not all(_analysed(conn).values()) and time.monotonic() < deadline:
                if maintenance.stale_tables(conn):
                    maintenance.refresh_after_bulk_write(db)
                time.sleep(0.5)
            assert _analysed(conn) == dict.fromkeys(maintenance.TABLES, True)
            assert maintenance.stale_tables(conn) == []
    finally:
        db.close()


def test_a_small_write_does_not_vacuum(pg_url: str) -> None:
    db = PostgresDatabase.open(fresh_database(pg_url))
    try:
        _load(db, "small", 20, seed=2)
        time.sleep(1.5)  # let the counters arrive, so "not stale" is not "not counted yet"
        assert maintenance.refresh_after_bulk_write(db) == []
        with db.session() as conn:
            assert _analysed(conn) == dict.fromkeys(maintenance.TABLES, False)
    finally:
        db.close()


def test_a_copy_into_a_new_dimension_leaves_its_hnsw_index_built_and_used(pg_url: str) -> None:
    db = PostgresDatabase.open(fresh_database(pg_url))
    try:
        with db.read() as conn:
            assert not vectors.index_exists(conn, DIMS)
        found = _load(db, "copied", 200, seed=3)
        with db.read() as conn:
            assert vectors.index_exists(conn, DIMS)
            entries = conn.exec_driver_sql(
                "SELECT count(*) FROM memlane_chunks WHERE dims = %s", (DIMS,)
            ).scalar_one()
        assert entries == 200
        store = PostgresIndexStore(db, "copied")
        query = found[7].tolist()
        hits = store.search_vector(query, model="m", sources=ALL_SOURCES, limit=3)
        assert hits[0].chunk_id == "copied:7"
        assert hits[0].score == pytest.approx(1.0, abs=1e-6)
        # A second agent of the same dimension is copied into the existing index.
        _load(db, "second", 30, seed=4)
        second = PostgresIndexStore(db, "second")
        assert len(second.search_vector(query, model="m", sources=ALL_SOURCES, limit=5)) == 5
    finally:
        db.close()
