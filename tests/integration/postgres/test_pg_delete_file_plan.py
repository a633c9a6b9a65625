"""Integration: deleting a file's postings on PostgreSQL reads the file's rids once and deletes
them by the (agent, rid) index, whatever the statistics know of the agent.

Through a join with the chunks, the planner guessed one row for an agent not yet analysed (a
new agent, a rebuild's temporary id) and looped over all of the agent's postings per file: a
first index or `index --force` grew with the square of the notes (800 notes: 102.7 s against
5.2 s, bench/pg_first_index_bench.py). The plan is what is checked here, not a time."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine

from memlane.adapters.postgres.database import PostgresDatabase
from memlane.adapters.postgres.postgres_index_store import PostgresIndexStore
from memlane.application.ports.index_store import IndexedFile
from memlane.domain.chunks import Chunk, ChunkId, ContentHash
from tests.pg_server import unique_agent

pytestmark = [pytest.mark.integration, pytest.mark.postgres]


@pytest.fixture
def store(pg_database: str) -> Iterator[PostgresIndexStore]:
    db = PostgresDatabase.open(pg_database)
    store = PostgresIndexStore(db, unique_agent())
    yield store
    store.close()


def _write(store: PostgresIndexStore, number: int) -> None:
    path = f"memory/n{number}.md"
    chunk = Chunk(
        ChunkId(f"memory:{path}:0"),
        "memory",
        path,
        1,
        2,
        f"# Note {number}\nTopic alpha{number} deploy {number} banana cherry.",
        ContentHash(f"h{number}"),
    )
    store.replace_file(IndexedFile("memory", path, ContentHash(path), 1.0, 1), [chunk], [None], "m")


def test_a_new_agents_file_postings_go_by_their_rids_not_a_join(
    store: PostgresIndexStore,
) -> None:
    for number in range(300):  # a new agent: no ANALYZE has seen its rows
        _write(store, number)
    deletes: list[tuple[str, object]] = []

    def record(_c: object, _cur: object, statement: str, params: object, *_rest: object) -> None:
        if statement.startswith("DELETE FROM memlane_postings"):
            deletes.append((statement, params))

    event.listen(Engine, "before_cursor_execute", record)
    try:
        _write(store, 7)  # the file again: its postings are deleted first
    finally:
        event.remove(Engine, "before_cursor_execute", record)

    (statement, params), *_ = deletes
    with store.database.read() as conn:
        plan = "\n".join(
            str(row[0])
            for row in conn.exec_driver_sql(f"EXPLAIN {statement}", params)  # type: ignore[arg-type]
        )

    assert "Nested Loop" not in plan, plan
    assert "InitPlan" in plan and "memlane_postings_rid" in plan, plan
    assert "memlane_chunks_file" in plan, plan  # the file's rids by its own index
