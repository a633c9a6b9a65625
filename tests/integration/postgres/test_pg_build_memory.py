"""Integration: the HNSW build gets the maintenance_work_mem its rows need (pgvector's own
NOTICE says whether the graph fitted), and a cap below the need is logged, not silent."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import structlog
from sqlalchemy import Connection

from memlane.adapters.postgres import build_memory, vectors
from memlane.adapters.postgres.database import PostgresDatabase, driver_connection
from memlane.adapters.postgres.postgres_index_store import PostgresIndexStore
from memlane.application.ports.index_store import IndexedFile
from memlane.domain.chunks import Chunk, ChunkId, ContentHash
from tests.pg_server import unique_agent

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

# A dimension no other test uses: its rows are only this module's.
DIMS = 389
ROWS = 1500  # ~3.5 MB of graph: over 1 MB, under the 64 MB floor


@pytest.fixture(scope="module")
def db(pg_database: str) -> Iterator[PostgresDatabase]:
    opened = PostgresDatabase.open(pg_database)
    store = PostgresIndexStore(opened, unique_agent())
    rng = np.random.default_rng(3)
    chunks = [
        Chunk(ChunkId(f"memory:m.md:{i}"), "memory", "memory/m.md", i + 1, i + 1, f"c {i}",
              ContentHash(f"h{i}"))
        for i in range(ROWS)
    ]  # fmt: skip
    vecs = rng.standard_normal((ROWS, DIMS)).tolist()
    store.replace_file(
        IndexedFile("memory", "memory/m.md", ContentHash("f"), 1.0, 1), chunks, vecs, "m"
    )
    yield opened
    opened.close()


def _build(conn: Connection, *, cap: int | None) -> list[str]:
    """Rebuild the index of DIMS in this transaction from a session at 1 MB; pgvector's notices."""
    notices: list[str] = []
    driver_connection(conn).add_notice_handler(lambda d: notices.append(d.message_primary or ""))
    conn.exec_driver_sql(f"DROP INDEX IF EXISTS memlane_chunks_hnsw_{DIMS}")
    conn.exec_driver_sql("SET LOCAL maintenance_work_mem = '1MB'")
    if cap is None:
        vectors.build_deferred_index(conn, DIMS)
    else:
        build_memory.set_for_build(conn, DIMS, cap=cap)
        conn.exec_driver_sql(
            f"CREATE INDEX memlane_chunks_hnsw_{DIMS} ON memlane_chunks USING hnsw "
            f"((embedding::vector({DIMS})) vector_cosine_ops) WHERE dims = {DIMS}"
        )
    return notices


def _spilled(notices: list[str]) -> bool:
    return any("no longer fits into maintenance_work_mem" in n for n in notices)


def test_the_build_is_given_the_memory_for_its_rows(db: PostgresDatabase) -> None:
    with db.engine.connect() as conn, conn.begin():
        with structlog.testing.capture_logs() as logs:
            notices = _build(conn, cap=None)
        setting = conn.exec_driver_sql(
            "SELECT setting::bigint * 1024 FROM pg_settings WHERE name = 'maintenance_work_mem'"
        ).scalar_one()
        conn.rollback()
    assert setting == build_memory.FLOOR_BYTES
    assert not _spilled(notices)
    assert not [e for e in logs if e["event"] == "hnsw_build_spills"]


def test_a_cap_below_the_need_spills_and_says_how_to_raise_it(db: PostgresDatabase) -> None:
    with db.engine.connect() as conn, conn.begin():
        with structlog.testing.capture_logs() as logs:
            notices = _build(conn, cap=1024 * 1024)
        conn.rollback()
    assert _spilled(notices)
    (warning,) = [e for e in logs if e["event"] == "hnsw_build_spills"]
    assert warning["log_level"] == "warning"
    assert warning["rows"] == ROWS
    assert warning["granted_mb"] == 1
    assert "maintenance_work_mem" in warning["hint"]


def test_an_existing_index_is_left_alone_without_sizing(db: PostgresDatabase) -> None:
    """A later agent adopting a dimension whose index exists builds nothing: no count of the
    rows, no memory set, no spill warning (the old code sized and warned on every adoption)."""
    with db.engine.connect() as conn, conn.begin():
        _build(conn, cap=None)  # the index of DIMS exists in this transaction
        conn.exec_driver_sql("SET LOCAL maintenance_work_mem = '1MB'")
        with structlog.testing.capture_logs() as logs:
            vectors.build_deferred_index(conn, DIMS)
        setting = conn.exec_driver_sql(
            "SELECT setting::bigint * 1024 FROM pg_settings WHERE name = 'maintenance_work_mem'"
        ).scalar_one()
        conn.rollback()
    assert setting == 1024 * 1024
    assert not logs
