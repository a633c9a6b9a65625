"""Integration: a "no note chunk lacks pieces" found by one process is kept in the database for
the next (adapters/piece_walk.py): a new CLI process does not scan every chunk again,
and any chunk write makes the next one look."""

from __future__ import annotations

from pathlib import Path

import pytest

from memlane.adapters.store import chunk_pieces
from memlane.adapters.store.database import SqliteDatabase
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from tests.call_counts import count_calls
from tests.contract._index_store_support import MODEL, axis, make_chunk, make_file
from tests.sqlite_writes import held_write_lock, refuse

pytestmark = pytest.mark.integration


def _indexed(path: Path) -> SqliteIndexStore:
    store = SqliteIndexStore.open(path)
    chunks = [make_chunk(0, "one"), make_chunk(1, "two")]
    store.replace_file(make_file(), chunks, [axis(0), axis(1)], MODEL)
    store.set_pieces(MODEL, {c.id: [axis(2)] for c in chunks})
    return store


def test_a_new_process_takes_the_none_another_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _indexed(tmp_path / "index.sqlite")
    scans = count_calls(monkeypatch, chunk_pieces, "missing")
    assert first.pieces_owed(MODEL, 65) == 0 and len(scans) == 1
    first.close()

    again = SqliteIndexStore.open(tmp_path / "index.sqlite")  # as a new CLI process opens it
    try:
        assert again.pieces_owed(MODEL, 65) == 0
        assert again.chunks_without_pieces(MODEL) == []
        assert len(scans) == 1  # neither scanned
    finally:
        again.close()


def test_a_chunk_written_since_is_found_by_the_next_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _indexed(tmp_path / "index.sqlite")
    assert first.pieces_owed(MODEL, 65) == 0
    late = make_chunk(0, "late", "memory/b.md")
    first.replace_file(make_file("memory/b.md"), [late], [axis(3)], MODEL)
    first.close()
    scans = count_calls(monkeypatch, chunk_pieces, "missing")

    again = SqliteIndexStore.open(tmp_path / "index.sqlite")
    try:
        assert again.pieces_owed(MODEL, 65) == 1
        assert [c.id for c in again.chunks_without_pieces(MODEL)] == [late.id]
        assert scans
    finally:
        again.close()


def test_a_vector_gained_in_place_is_found_too(tmp_path: Path) -> None:
    first = _indexed(tmp_path / "index.sqlite")
    late = make_chunk(0, "late", "memory/b.md")
    first.replace_file(make_file("memory/b.md"), [late], [None], "fts-only")
    assert first.pieces_owed(MODEL, 65) == 0  # no vector yet: nothing to pair with
    first.set_vectors(MODEL, {late.id: axis(3)})
    first.close()

    again = SqliteIndexStore.open(tmp_path / "index.sqlite")
    try:
        assert again.pieces_owed(MODEL, 65) == 1
    finally:
        again.close()


def test_a_store_that_cannot_be_written_answers_and_scans_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The "none" is a saving, not a duty: a read-only database answers all the same."""
    _indexed(tmp_path / "index.sqlite").close()
    db = SqliteDatabase.open(tmp_path / "index.sqlite")

    refuse(monkeypatch, db, "write_if_free")
    scans = count_calls(monkeypatch, chunk_pieces, "missing")
    store = SqliteIndexStore(db)
    try:
        assert store.pieces_owed(MODEL, 65) == 0
        assert store.pieces_owed(MODEL, 65) == 0  # this process remembers it
        assert len(scans) == 1
    finally:
        store.close()
    again = SqliteIndexStore.open(tmp_path / "index.sqlite")
    try:
        assert again.pieces_owed(MODEL, 65) == 0
        assert len(scans) == 2  # nothing was recorded: the next process scans
    finally:
        again.close()


def test_the_none_is_skipped_not_waited_for_while_another_process_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _indexed(tmp_path / "index.sqlite").close()
    db = SqliteDatabase.open(tmp_path / "index.sqlite")
    refuse(monkeypatch, db, "write")
    scans = count_calls(monkeypatch, chunk_pieces, "missing")
    store = SqliteIndexStore(db)
    try:
        with held_write_lock(tmp_path / "index.sqlite"):
            assert store.pieces_owed(MODEL, 65) == 0
    finally:
        store.close()
    again = SqliteIndexStore.open(tmp_path / "index.sqlite")
    try:
        assert again.pieces_owed(MODEL, 65) == 0
        assert len(scans) == 2  # nothing was noted: the next process scanned
    finally:
        again.close()
