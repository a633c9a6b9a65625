"""Integration: a "no note chunk lacks pieces" found by one process is kept in the database for
the next (adapters/piece_walk.py): a new CLI process does not scan every chunk again,
and any chunk write makes the next one look. What a store does when it cannot leave the "none":
test_note_writes.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from memlane.adapters.store import chunk_pieces
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from tests.call_counts import count_calls
from tests.contract._index_store_support import MODEL, axis, make_chunk, make_file

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
