"""Integration: a count of vectors made by one process is kept in the SQLite database for the
next (adapters/progress_notes.py): a new CLI process does not count every chunk again, and any
write of chunk rows or vectors, in this process or another, makes the next one count."""

from __future__ import annotations

from pathlib import Path

import pytest

from memlane.adapters.store import vector_progress
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.application.ports.index_store import VectorProgress
from tests.call_counts import count_calls
from tests.contract._index_store_support import MODEL, axis, make_chunk, make_file

pytestmark = pytest.mark.integration


def _indexed(path: Path) -> SqliteIndexStore:
    store = SqliteIndexStore.open(path)
    chunks = [make_chunk(0, "one"), make_chunk(1, "two")]
    store.replace_file(make_file(), chunks, [axis(0), None], MODEL)
    return store


def test_a_new_process_takes_the_count_another_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _indexed(tmp_path / "index.sqlite").close()
    counts = count_calls(monkeypatch, vector_progress, "vector_progress")
    first = SqliteIndexStore.open(tmp_path / "index.sqlite")
    assert first.vector_progress(MODEL) == VectorProgress(done=1, total=2)
    first.close()

    again = SqliteIndexStore.open(tmp_path / "index.sqlite")  # as a new CLI process opens it
    try:
        assert again.vector_progress(MODEL) == VectorProgress(done=1, total=2)
        assert len(counts) == 1  # it read the note
        assert again.vector_progress("another@model") == VectorProgress(done=0, total=2)
        assert len(counts) == 2  # a note is of one model
    finally:
        again.close()


@pytest.mark.parametrize("write", ["vector in place", "chunk rows"])
def test_a_write_since_makes_the_next_process_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write: str
) -> None:
    writer = _indexed(tmp_path / "index.sqlite")
    assert writer.vector_progress(MODEL) == VectorProgress(done=1, total=2)  # noted
    if write == "vector in place":
        writer.set_vectors(MODEL, {make_chunk(1, "two").id: axis(1)})
        expected = VectorProgress(done=2, total=2)
    else:
        writer.replace_file(make_file("memory/b.md"), [make_chunk(0, "three", "memory/b.md")],
                            [axis(2)], MODEL)  # fmt: skip
        expected = VectorProgress(done=2, total=3)
    writer.close()
    counts = count_calls(monkeypatch, vector_progress, "vector_progress")

    again = SqliteIndexStore.open(tmp_path / "index.sqlite")
    try:
        assert again.vector_progress(MODEL) == expected
    finally:
        again.close()
    # This process carried its count over its own write (no count), so no note was
    # written at the new state: the next process counted, and noted it.
    assert len(counts) == 1


def test_the_writer_leaves_the_note_of_counts_carried_over_its_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sync ends by reading the progress for its report: counts this process carried over its
    own writes (no count) are noted then, so the searches after the sync count nothing."""
    writer = _indexed(tmp_path / "index.sqlite")
    counts = count_calls(monkeypatch, vector_progress, "vector_progress")
    assert writer.vector_progress(MODEL) == VectorProgress(done=1, total=2)
    writer.set_vectors(MODEL, {make_chunk(1, "two").id: axis(1)})
    assert writer.vector_progress(MODEL) == VectorProgress(done=2, total=2)  # carried, noted
    writer.close()
    assert len(counts) == 1

    again = SqliteIndexStore.open(tmp_path / "index.sqlite")
    try:
        assert again.vector_progress(MODEL) == VectorProgress(done=2, total=2)
        assert len(counts) == 1  # the writer's note
    finally:
        again.close()
