"""Integration: PostgreSQL counts an agent's vectors once per state of its rows
(adapters/postgres/vector_counts.py): a search's repeated questions, and the next process's,
read the state and a note, and any write that changes the answer, by this store or another, is
counted again."""

from __future__ import annotations

import pytest

from memlane.adapters.postgres import rows
from memlane.adapters.postgres.database import PostgresDatabase
from memlane.adapters.postgres.postgres_index_store import PostgresIndexStore
from memlane.application.ports.index_store import StoreError, VectorProgress
from tests.call_counts import count_calls
from tests.contract._index_store_support import MODEL, axis, make_chunk, make_file, make_meta
from tests.pg_server import unique_agent

pytestmark = [pytest.mark.integration, pytest.mark.postgres]


def test_the_count_is_kept_until_a_write_moves_it(
    pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = PostgresDatabase.open(pg_database)
    agent = unique_agent()
    writer = PostgresIndexStore(db, agent)
    chunks = [make_chunk(0, "one"), make_chunk(1, "two")]
    writer.replace_file(make_file(), chunks, [axis(0), None], MODEL)
    counts = count_calls(monkeypatch, rows, "vector_progress")

    reader = PostgresIndexStore(db, agent)  # another process's store
    assert reader.vector_progress(MODEL) == VectorProgress(done=1, total=2)
    assert reader.vector_progress(MODEL) == VectorProgress(done=1, total=2)
    assert len(counts) == 1  # the second question read the state, not the chunks
    later = PostgresIndexStore(db, agent)  # the next CLI command: reads the note
    assert later.vector_progress(MODEL) == VectorProgress(done=1, total=2)
    assert len(counts) == 1

    writer.set_vectors(MODEL, {chunks[1].id: axis(1)})  # in place: no chunk row written
    assert reader.vector_progress(MODEL) == VectorProgress(done=2, total=2)
    assert reader.pieces_owed(MODEL, 65) == 2  # the backlog's state moved with it
    assert len(counts) == 2

    writer.replace_file(make_file("memory/b.md"), [make_chunk(0, "three", "memory/b.md")],
                        [None], MODEL)  # fmt: skip
    assert reader.vector_progress(MODEL) == VectorProgress(done=2, total=3)
    assert reader.vector_progress("another@model") == VectorProgress(done=0, total=3)
    assert len(counts) == 4

    writer.set_meta(make_meta(dimensions=8))  # other dimensions: every vector dropped in place
    assert reader.vector_progress(MODEL) == VectorProgress(done=0, total=3)
    for store in (writer, reader, later):
        store.close()


def test_a_write_to_another_agent_keeps_the_count(
    pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = PostgresDatabase.open(pg_database)
    mine, other = PostgresIndexStore(db, unique_agent()), PostgresIndexStore(db, unique_agent())
    mine.replace_file(make_file(), [make_chunk(0, "one")], [axis(0)], MODEL)
    other.replace_file(make_file(), [make_chunk(0, "one")], [None], MODEL)
    counts = count_calls(monkeypatch, rows, "vector_progress")
    assert mine.vector_progress(MODEL) == VectorProgress(done=1, total=1)
    other.set_vectors(MODEL, {make_chunk(0, "one").id: axis(1)})
    assert mine.vector_progress(MODEL) == VectorProgress(done=1, total=1)
    assert len(counts) == 1
    for store in (mine, other):
        store.close()


def test_a_store_that_cannot_write_the_note_still_answers(
    pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = PostgresDatabase.open(pg_database)
    agent = unique_agent()
    store = PostgresIndexStore(db, agent)
    store.replace_file(make_file(), [make_chunk(0, "one")], [axis(0)], MODEL)

    def refused(*args: object, **kw: object) -> None:
        raise StoreError("read-only")

    monkeypatch.setattr(db, "write", refused)
    fresh = PostgresIndexStore(db, agent)
    assert fresh.vector_progress(MODEL) == VectorProgress(done=1, total=1)
    counts = count_calls(monkeypatch, rows, "vector_progress")
    assert PostgresIndexStore(db, agent).vector_progress(MODEL) == VectorProgress(1, 1)
    assert len(counts) == 1  # no note: the next process counted again
    store.close()
    fresh.close()
