"""Integration: PostgreSQL keeps a "no note chunk lacks pieces" for the next process too
(adapters/piece_walk.py): a new store on the same agent does not scan every chunk again, and a
chunk written since, or a vector set in place, makes it look."""

from __future__ import annotations

import pytest

from memlane.adapters.postgres import chunk_pieces
from memlane.adapters.postgres.database import PostgresDatabase
from memlane.adapters.postgres.postgres_index_store import PostgresIndexStore
from tests.call_counts import count_calls
from tests.contract._index_store_support import MODEL, axis, make_chunk, make_file
from tests.pg_server import unique_agent

pytestmark = [pytest.mark.integration, pytest.mark.postgres]


def test_a_new_process_takes_the_none_and_a_later_write_is_found(
    pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = PostgresDatabase.open(pg_database)
    agent = unique_agent()
    first = PostgresIndexStore(db, agent)
    chunks = [make_chunk(0, "one"), make_chunk(1, "two")]
    first.replace_file(make_file(), chunks, [axis(0), axis(1)], MODEL)
    first.set_pieces(MODEL, {c.id: [axis(2)] for c in chunks})
    scans = count_calls(monkeypatch, chunk_pieces, "missing")
    assert first.pieces_owed(MODEL, 65) == 0 and len(scans) == 1

    again = PostgresIndexStore(db, agent)  # as a new CLI process opens it
    assert again.pieces_owed(MODEL, 65) == 0
    assert again.chunks_without_pieces(MODEL) == []
    assert len(scans) == 1  # neither scanned

    late = make_chunk(0, "late", "memory/b.md")
    again.replace_file(make_file("memory/b.md"), [late], [None], "fts-only")
    third = PostgresIndexStore(db, agent)
    assert third.pieces_owed(MODEL, 65) == 0  # no vector yet: nothing to pair with
    again.set_vectors(MODEL, {late.id: axis(3)})  # in place: the vector generation moves

    fourth = PostgresIndexStore(db, agent)
    assert fourth.pieces_owed(MODEL, 65) == 1
    assert [c.id for c in fourth.chunks_without_pieces(MODEL)] == [late.id]
    for store in (first, again, third, fourth):
        store.close()
