"""Contract: every IndexStore (fake, SQLite, PostgreSQL) replaces, deletes and touches files alike."""

from __future__ import annotations

import math

import pytest

from memlane.application.ports.index_store import (
    DimensionMismatch,
    IndexStore,
    StoreError,
)
from memlane.domain.chunks import ContentHash
from memlane.domain.sources import ALL_SOURCES
from tests.contract._index_store_support import (
    MODEL,
    axis,
    ids,
    make_chunk,
    make_file,
    seed,
    stored,
)
from tests.contract._index_store_support import store as store  # noqa: PLC0414 (the fixture)


class TestReplaceFile:
    def test_old_chunks_of_the_file_disappear(self, store: IndexStore) -> None:
        """Replacing a file leaves only its new chunks, in every leg."""
        seed(store)

        store.replace_file(make_file("memory/a.md"), [make_chunk(5, "zeta")], [axis(0)], MODEL)

        assert "memory:memory/a.md:0" not in stored(store)
        assert ids(store.search_keyword('"apples"', sources=["memory"], limit=10)) == []
        hits = store.search_vector(axis(0), model=MODEL, sources=["memory"], limit=1)
        assert ids(hits) == ["memory:memory/a.md:5"]

    def test_other_files_are_untouched(self, store: IndexStore) -> None:
        """Only the replaced file changes."""
        seed(store)

        store.replace_file(make_file("memory/a.md"), [], [], MODEL)

        assert stored(store)["memory:memory/b.md:0"].text == "gamma grapes"
        assert [(c.source, c.files, c.chunks) for c in store.counts()] == [
            ("memory", 2, 1),
            ("sessions", 1, 1),
        ]

    def test_files_are_listed_with_hash_mtime_and_size_sorted(self, store: IndexStore) -> None:
        """files() is sorted by source then path; file() finds one row."""
        seed(store)

        listed = store.files()

        assert [(f.source, f.path) for f in listed] == [
            ("memory", "memory/a.md"),
            ("memory", "memory/b.md"),
            ("sessions", "sessions/s.jsonl"),
        ]
        assert store.files("sessions")[0].hash == "hash-sessions/s.jsonl"
        assert store.file("memory", "memory/b.md") == make_file("memory/b.md")
        assert store.file("sessions", "memory/b.md") is None

    def test_same_path_in_two_sources_is_two_files(self, store: IndexStore) -> None:
        """The files key is (source, path), not path alone: two sources may share a path."""
        store.replace_file(make_file("x.md"), [make_chunk(0, "one", path="x.md")], [None], MODEL)
        store.replace_file(
            make_file("x.md", source="sessions"),
            [make_chunk(0, "two", path="x.md", source="sessions")],
            [None],
            MODEL,
        )

        assert [(f.source, f.path) for f in store.files()] == [
            ("memory", "x.md"),
            ("sessions", "x.md"),
        ]

    def test_wrong_dimension_raises_and_changes_nothing(self, store: IndexStore) -> None:
        """A vector of another length is refused before anything is written."""
        seed(store)

        with pytest.raises(DimensionMismatch):
            store.replace_file(
                make_file("memory/a.md"), [make_chunk(7, "new")], [[1.0, 0.0]], MODEL
            )

        assert "memory:memory/a.md:0" in stored(store)
        assert "memory:memory/a.md:7" not in stored(store)

    def test_nan_vector_is_rejected_and_changes_nothing(self, store: IndexStore) -> None:
        """Non-finite vectors are refused with StoreError (the store does not sanitise)."""
        seed(store)

        with pytest.raises(StoreError):
            store.replace_file(
                make_file("memory/a.md"),
                [make_chunk(7, "new")],
                [[math.nan, 0.0, 0.0, 0.0]],
                MODEL,
            )

        assert "memory:memory/a.md:0" in stored(store)

    def test_vectors_and_chunks_must_pair_up(self, store: IndexStore) -> None:
        """One vector (or None) per chunk."""
        with pytest.raises(StoreError):
            store.replace_file(make_file(), [make_chunk(0, "a")], [], MODEL)

    def test_duplicate_chunk_ids_are_refused(self, store: IndexStore) -> None:
        """Two chunks with one id would desynchronise the keyword and vector legs: refused."""
        with pytest.raises(StoreError):
            store.replace_file(
                make_file(), [make_chunk(0, "a"), make_chunk(0, "b")], [None, None], MODEL
            )

    def test_chunk_without_vector_is_keyword_searchable(self, store: IndexStore) -> None:
        """A None vector means keyword-only; the chunk waits for a vector."""
        store.replace_file(make_file(), [make_chunk(0, "lonely words")], [None], "fts-only")

        assert ids(store.search_keyword('"lonely"', sources=ALL_SOURCES, limit=5)) == [
            "memory:memory/a.md:0"
        ]
        assert [c.id for c in store.chunks_without_vectors(MODEL)] == ["memory:memory/a.md:0"]


class TestDeleteAndTouch:
    def test_delete_file_removes_every_row(self, store: IndexStore) -> None:
        """Chunks, keyword rows, vectors and the files row go."""
        seed(store)

        store.delete_file("memory", "memory/a.md")

        assert store.file("memory", "memory/a.md") is None
        assert ids(store.search_keyword('"bananas"', sources=ALL_SOURCES, limit=5)) == []
        hits = store.search_vector(axis(0), model=MODEL, sources=["memory"], limit=1)
        assert ids(hits) == ["memory:memory/b.md:0"] or hits[0].score < 0.5

    def test_delete_unknown_file_is_a_no_op(self, store: IndexStore) -> None:
        seed(store)

        store.delete_file("memory", "nope.md")

        assert len(store.files()) == 3

    def test_touch_updates_mtime_and_size_only(self, store: IndexStore) -> None:
        seed(store)

        store.touch_file(make_file("memory/b.md", hash=ContentHash("other"), mtime=7.0, size=9))

        assert store.file("memory", "memory/b.md") == make_file("memory/b.md", mtime=7.0, size=9)

    def test_touch_of_unknown_file_adds_nothing(self, store: IndexStore) -> None:
        store.touch_file(make_file("ghost.md"))

        assert store.files() == []
