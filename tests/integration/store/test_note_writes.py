"""Integration: the notes a SQLite search leaves for the next process (the count of vectors,
adapters/progress_notes.py; the pieces' "none", adapters/piece_walk.py) are savings, never
duties. Both go through `SqliteBacklog.record`, and each is checked here on its own call path:
a store that cannot write answers all the same, a search never waits behind another process's
write to leave one, and the next process then does the work again."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest
from sqlalchemy import Connection

from memlane.adapters.store import chunk_pieces, meta_table, vector_progress
from memlane.adapters.store.database import SqliteDatabase
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.application.ports.index_store import VectorProgress
from tests.call_counts import count_calls
from tests.contract._index_store_support import MODEL, axis, make_chunk, make_file
from tests.sqlite_writes import held_write_lock, refuse

pytestmark = pytest.mark.integration


@dataclass(frozen=True)
class Note:
    """One note: the question that leaves it, its answer here, and the work it spares."""

    ask: Callable[[SqliteIndexStore], object]
    answer: object
    module: ModuleType
    work: str


NOTES = [
    pytest.param(
        Note(
            lambda s: s.vector_progress(MODEL),
            VectorProgress(2, 2),
            vector_progress,
            "vector_progress",
        ),
        id="vector count",
    ),
    pytest.param(
        Note(lambda s: s.pieces_owed(MODEL, 65), 0, chunk_pieces, "missing"), id="pieces none"
    ),
]


def _indexed(path: Path) -> None:
    """Two note chunks with their vectors and pieces: nothing owed, two vectors of two."""
    store = SqliteIndexStore.open(path)
    chunks = [make_chunk(0, "one"), make_chunk(1, "two")]
    store.replace_file(make_file(), chunks, [axis(0), axis(1)], MODEL)
    store.set_pieces(MODEL, {c.id: [axis(2)] for c in chunks})
    store.close()


def _next_process_does_the_work_again(path: Path, note: Note, done: list[int]) -> None:
    before = len(done)
    again = SqliteIndexStore.open(path)
    try:
        assert note.ask(again) == note.answer
        assert len(done) == before + 1  # nothing was noted
    finally:
        again.close()


@pytest.mark.parametrize("note", NOTES)
def test_a_store_that_cannot_be_written_answers_and_works_again_next_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, note: Note
) -> None:
    _indexed(tmp_path / "index.sqlite")
    db = SqliteDatabase.open(tmp_path / "index.sqlite")
    refuse(monkeypatch, db, "write_if_free")
    done = count_calls(monkeypatch, note.module, note.work)
    store = SqliteIndexStore(db)
    try:
        assert note.ask(store) == note.answer
        assert note.ask(store) == note.answer
        assert len(done) == 1  # this process remembers it
    finally:
        store.close()
    _next_process_does_the_work_again(tmp_path / "index.sqlite", note, done)


@pytest.mark.parametrize("note", NOTES)
def test_a_note_is_skipped_not_waited_for_while_another_process_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, note: Note
) -> None:
    """Never the blocking `write` (it would wait up to the busy timeout behind a long write)."""
    _indexed(tmp_path / "index.sqlite")
    db = SqliteDatabase.open(tmp_path / "index.sqlite")
    refuse(monkeypatch, db, "write")
    done = count_calls(monkeypatch, note.module, note.work)
    store = SqliteIndexStore(db)
    try:
        with held_write_lock(tmp_path / "index.sqlite"):
            assert note.ask(store) == note.answer
    finally:
        store.close()
    _next_process_does_the_work_again(tmp_path / "index.sqlite", note, done)


def _put(value: str) -> Callable[[Connection], str]:
    def work(conn: Connection) -> str:
        meta_table.put(conn, "k", value)
        return "done"

    return work


def test_write_if_free_writes_when_free_and_answers_none_when_held(tmp_path: Path) -> None:
    db = SqliteDatabase.open(tmp_path / "index.sqlite")
    try:
        assert db.write_if_free(_put("1")) == "done"
        with db.read() as conn:
            assert meta_table.get(conn, "k") == "1"
        with held_write_lock(tmp_path / "index.sqlite"):
            assert db.write_if_free(_put("2")) is None
        with db.read() as conn:
            assert meta_table.get(conn, "k") == "1"  # the held write lock skipped "2"
        assert db.write_if_free(_put("3")) == "done"
        with db.read() as conn:
            assert meta_table.get(conn, "k") == "3"
        assert db.write(_put("4")) == "done"  # the usual write
        with db.read() as conn:
            assert meta_table.get(conn, "k") == "4"
    finally:
        db.close()
