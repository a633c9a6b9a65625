"""Contract: every IndexStore (fake, SQLite, PostgreSQL) keeps vectors, index meta and the embedding
cache alike.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from memlane.application.ports.index_store import (
    CacheKey,
    DimensionMismatch,
    IndexStore,
    VectorProgress,
)
from memlane.domain.chunks import ChunkId, ContentHash
from memlane.domain.sources import ALL_SOURCES
from tests.contract._index_store_support import (
    KEY,
    MODEL,
    axis,
    ids,
    make_chunk,
    make_file,
    make_meta,
    seed,
)
from tests.contract._index_store_support import store as store  # noqa: PLC0414 (the fixture)


class TestVectorsAndMeta:
    def test_set_vectors_attaches_vectors_to_chunks(self, store: IndexStore) -> None:
        store.replace_file(
            make_file(), [make_chunk(0, "one"), make_chunk(1, "two")], [None, None], "fts-only"
        )

        store.set_vectors(MODEL, {ChunkId("memory:memory/a.md:1"): axis(2)})

        assert [c.id for c in store.chunks_without_vectors(MODEL)] == ["memory:memory/a.md:0"]
        hits = store.search_vector(axis(2), model=MODEL, sources=ALL_SOURCES, limit=5)
        assert ids(hits) == ["memory:memory/a.md:1"]
        assert ids(store.search_keyword('"two"', sources=ALL_SOURCES, limit=5)) == [
            "memory:memory/a.md:1"
        ]

    def test_a_chunk_needing_a_vector_comes_back_with_its_heading_trail(
        self, store: IndexStore
    ) -> None:
        """The backfill embeds what the chunk was made to be embedded as: trail and text."""
        headed = replace(make_chunk(1, "second part"), context="# Title\n## Section")
        store.replace_file(
            make_file(), [make_chunk(0, "# Title"), headed], [None, None], "fts-only"
        )

        back = {c.id: c for c in store.chunks_without_vectors(MODEL)}

        assert back[headed.id] == headed
        assert back[headed.id].indexed_text == "# Title\n## Section\nsecond part"
        assert back[ChunkId("memory:memory/a.md:0")].context == ""
        # The keyword leg reads the trail too: the chunk under "## Section" matches "section".
        assert ids(store.search_keyword('"section"', sources=ALL_SOURCES, limit=5)) == [headed.id]

    def test_rewriting_trailed_chunks_keeps_the_keyword_rows_exact(self, store: IndexStore) -> None:
        """A row is deleted with the document it was built from (trail included): rewriting the
        file leaves no stale term behind and the new trail searchable."""
        first = replace(make_chunk(1, "second part"), context="# Old title")
        store.replace_file(make_file(), [make_chunk(0, "# Old title"), first], [None, None], "m0")
        second = replace(make_chunk(1, "second part"), context="# New title")
        store.replace_file(make_file(), [make_chunk(0, "# New title"), second], [None, None], "m0")

        assert ids(store.search_keyword('"old"', sources=ALL_SOURCES, limit=5)) == []
        assert ids(store.search_keyword('"new"', sources=ALL_SOURCES, limit=5)) == sorted(
            ["memory:memory/a.md:0", "memory:memory/a.md:1"]
        )

    def test_chunks_of_another_model_need_vectors(self, store: IndexStore) -> None:
        seed(store)

        assert len(store.chunks_without_vectors("new-model")) == 4
        assert store.chunks_without_vectors(MODEL) == []
        assert len(store.chunks_without_vectors("new-model", limit=2)) == 2

    def test_vector_progress_counts_what_the_backfill_has_done(self, store: IndexStore) -> None:
        """done + missing = total, for the model asked about; missing is exactly what
        chunks_without_vectors returns, so the backfill's progress and its work agree."""
        assert store.vector_progress(MODEL) == VectorProgress(done=0, total=0)
        store.replace_file(
            make_file(),
            [make_chunk(0, "one"), make_chunk(1, "two"), make_chunk(2, "three")],
            [None, None, None],
            "fts-only",
        )
        store.replace_file(
            make_file("memory/b.md"), [make_chunk(0, "four", path="memory/b.md")], [axis(1)], "old"
        )
        assert store.vector_progress(MODEL) == VectorProgress(done=0, total=4)

        store.set_vectors(MODEL, {ChunkId("memory:memory/a.md:1"): axis(2)})

        progress = store.vector_progress(MODEL)
        assert progress == VectorProgress(done=1, total=4)
        assert progress.missing == len(store.chunks_without_vectors(MODEL)) == 3
        assert store.vector_progress("old") == VectorProgress(done=1, total=4)
        missing = store.chunks_without_vectors(MODEL)
        store.set_vectors(MODEL, {c.id: axis(0) for c in missing})
        assert store.vector_progress(MODEL).complete
        store.delete_file("memory", "memory/b.md")
        assert store.vector_progress(MODEL) == VectorProgress(done=3, total=3)

    def test_set_vectors_of_wrong_dimension_raises(self, store: IndexStore) -> None:
        seed(store)

        with pytest.raises(DimensionMismatch):
            store.set_vectors(MODEL, {ChunkId("memory:memory/a.md:0"): [1.0]})

    def test_meta_round_trips(self, store: IndexStore) -> None:
        assert store.meta() is None

        store.set_meta(make_meta())

        assert store.meta() == make_meta()

    def test_new_dimensions_drop_old_vectors_but_keep_chunks(self, store: IndexStore) -> None:
        """An explicit set_meta with other dimensions resets vectors; keyword rows stay."""
        seed(store)

        store.set_meta(make_meta(dimensions=2, model="small"))

        assert len(store.chunks_without_vectors("small")) == 4
        assert store.search_vector([1.0, 0.0], model=MODEL, sources=ALL_SOURCES, limit=3) == []
        assert len(store.search_keyword('"apples"', sources=ALL_SOURCES, limit=5)) == 2
        store.set_vectors("small", {ChunkId("memory:memory/a.md:0"): [0.0, 1.0]})
        hits = store.search_vector([0.0, 1.0], model="small", sources=ALL_SOURCES, limit=3)
        assert ids(hits) == ["memory:memory/a.md:0"]

    def test_keyword_only_meta_keeps_vectors(self, store: IndexStore) -> None:
        seed(store)

        store.set_meta(make_meta(dimensions=None, model="fts-only"))

        assert len(store.search_vector(axis(0), model=MODEL, sources=ALL_SOURCES, limit=9)) == 4


class TestEmbeddingCache:
    def test_put_then_get_by_key_and_hash(self, store: IndexStore) -> None:
        store.cache_put(KEY, {ContentHash("h1"): [0.5, 0.25], ContentHash("h2"): [1.0, 0.0]})

        got = store.cache_get(KEY, [ContentHash("h1"), ContentHash("nope")])

        assert got == {ContentHash("h1"): [0.5, 0.25]}
        assert store.cache_get(CacheKey("fake", MODEL, "other"), [ContentHash("h1")]) == {}
        assert store.cache_size() == 2

    def test_prune_removes_least_recently_put(self, store: IndexStore) -> None:
        """cache_put refreshes recency; prune keeps the most recent entries."""
        for name in ("a", "b", "c"):
            store.cache_put(KEY, {ContentHash(name): [1.0]})
        store.cache_put(KEY, {ContentHash("a"): [1.0]})

        removed = store.cache_prune(2)

        assert removed == 1
        assert sorted(store.cache_get(KEY, [ContentHash(n) for n in "abc"])) == ["a", "c"]
        assert store.cache_prune(5) == 0
