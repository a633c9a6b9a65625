"""Integration: many processes ("hosts", each with its own state dir) share one PostgreSQL memory.

Writers sync different agents into one database at once while searcher processes query both
agents; afterwards every file of every agent is indexed exactly once, no event was handled
twice, and nobody saw an error. The sync lock is tested on its own: a second session waits for
the first and says so.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from pathlib import Path

import pytest
import structlog

from memlane.adapters.postgres.database import PostgresDatabase
from memlane.adapters.postgres.postgres_event_log import PostgresEventLog
from memlane.adapters.postgres.postgres_index_store import PostgresIndexStore
from memlane.adapters.postgres.sync_lock import PostgresSyncLock, lock_key
from memlane.domain import events
from memlane.domain.sources import ALL_SOURCES
from tests.integration.postgres.hosts import NEW_PER_ROUND, ROUNDS, searcher, writer
from tests.pg_server import fresh_database

pytestmark = [pytest.mark.integration, pytest.mark.postgres, pytest.mark.slow]


def test_two_hosts_sync_different_agents_while_others_search(pg_url: str, tmp_path: Path) -> None:
    url = fresh_database(pg_url)
    PostgresDatabase.open(url).close()  # the schema exists before the race starts
    ctx = multiprocessing.get_context("spawn")
    result = ctx.Queue()
    stop = ctx.Event()
    agents = ["alpha", "beta"]
    writers = [ctx.Process(target=writer, args=(url, str(tmp_path), a, result)) for a in agents]
    searchers = [ctx.Process(target=searcher, args=(url, agents, stop, result)) for _ in range(2)]
    for p in (*searchers, *writers):
        p.start()
    for p in writers:
        p.join(timeout=240)
    stop.set()
    for p in searchers:
        p.join(timeout=60)
    reports = [result.get(timeout=10) for _ in range(len(writers) + len(searchers))]

    assert sorted(r for r in reports if r[0] in agents) == [("alpha", "ok"), ("beta", "ok")]
    for _, done, errors in (r for r in reports if r[0] == "searcher"):
        assert errors == []
        assert done > 0
    db = PostgresDatabase.open(url)
    try:
        expected = {f"memory/n{n}.md" for n in range(ROUNDS * NEW_PER_ROUND)}
        for agent in agents:
            store = PostgresIndexStore(db, agent)
            assert {f.path for f in store.files()} == expected
            assert [(c.source, c.files, c.chunks) for c in store.counts()] == [
                ("memory", len(expected), len(expected))
            ]
            recorded = [r.event for r in PostgresEventLog(db, agent).read(0, limit=10_000)]
            rebuilt = [e for e in recorded if isinstance(e, events.IndexRebuilt)]
            indexed = [e.path for e in recorded if isinstance(e, events.FileIndexed)]
            # The first sync builds the index (one rebuild of the first notes); later syncs
            # index each new note once and n0.md once per edit: no work done twice.
            assert [e.files for e in rebuilt] == [NEW_PER_ROUND]
            later = {f"memory/n{n}.md" for n in range(NEW_PER_ROUND, ROUNDS * NEW_PER_ROUND)}
            assert sorted(indexed) == sorted([*later, *["memory/n0.md"] * (ROUNDS - 1)])
            hits = store.search_keyword('"revision"', sources=ALL_SOURCES, limit=100)
            assert all(agent in h.text for h in hits) and len(hits) == len(expected)
    finally:
        db.close()


def test_a_second_sync_of_one_agent_waits_for_the_first_and_says_so(pg_database: str) -> None:
    first_db, second_db = PostgresDatabase.open(pg_database), PostgresDatabase.open(pg_database)
    first, second = PostgresSyncLock(first_db, "shared"), PostgresSyncLock(second_db, "shared")
    acquired = threading.Event()
    order: list[str] = []

    def contender() -> None:
        with second.hold():
            order.append("second")
        acquired.set()

    with structlog.testing.capture_logs() as logs:
        with first.hold():
            thread = threading.Thread(target=contender)
            thread.start()
            # Wait (bounded by the test timeout, not a clock) until the second session queues.
            while not _waiting_on(first_db, lock_key("shared")):
                time.sleep(0.01)
            order.append("first")
        thread.join()

    assert acquired.is_set()
    assert order == ["first", "second"]
    waits = [e for e in logs if e["event"] == "sync_waiting_for_other_process"]
    assert [e["log_level"] for e in waits] == ["warning"]  # seen at the default level
    first_db.close()
    second_db.close()


def _waiting_on(db: PostgresDatabase, key: int) -> bool:
    """Whether a session waits for the advisory lock `key` (pg_locks shows its low 32 bits)."""
    with db.read() as conn:
        return bool(
            conn.exec_driver_sql(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
                "AND objid::bigint = %s",
                (key & 0xFFFFFFFF,),
            ).scalar_one()
        )
