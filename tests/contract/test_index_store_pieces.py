"""Contract: every IndexStore (fake, SQLite, PostgreSQL) keeps note chunks' piece vectors alike
(domain/note_pieces.py): listed once a note chunk has its own vector, scored by their best
cosine, and gone with their chunk.
"""

from __future__ import annotations

import math

import pytest

from memlane.application.ports.index_store import IndexStore
from memlane.domain.chunks import ChunkId
from tests.contract._index_store_support import MODEL, axis, make_chunk, make_file
from tests.contract._index_store_support import store as store  # noqa: PLC0414 (the fixture)

NOTE_A = ChunkId("memory:memory/a.md:0")
NOTE_B = ChunkId("memory:memory/a.md:1")
TALK = ChunkId("sessions:sessions/s.jsonl:0")


def _index(store: IndexStore) -> None:
    store.replace_file(
        make_file(), [make_chunk(0, "one"), make_chunk(1, "two")], [axis(0), axis(1)], MODEL
    )
    store.replace_file(
        make_file("sessions/s.jsonl", source="sessions"),
        [make_chunk(0, "talk", path="sessions/s.jsonl", source="sessions")],
        [axis(2)],
        MODEL,
    )


def _unit(*values: float) -> list[float]:
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values]


class TestPieces:
    def test_note_chunks_with_a_vector_wait_for_pieces_transcripts_never(
        self, store: IndexStore
    ) -> None:
        _index(store)
        store.replace_file(
            make_file("memory/b.md"), [make_chunk(0, "x", "memory/b.md")], [None], "fts-only"
        )

        assert [c.id for c in store.chunks_without_pieces(MODEL)] == [NOTE_A, NOTE_B]
        assert store.chunks_without_pieces("other-model") == []

    def test_set_pieces_are_scored_by_their_best_cosine(self, store: IndexStore) -> None:
        _index(store)
        store.set_pieces(MODEL, {NOTE_A: [axis(1), _unit(1, 1, 0, 0)]})

        found = store.piece_cosines(axis(1), model=MODEL, ids=[NOTE_A, NOTE_B, TALK])

        assert [c.id for c in store.chunks_without_pieces(MODEL)] == [NOTE_B]
        assert found[NOTE_A][0] == pytest.approx(0.0, abs=1e-6)
        assert found[NOTE_A][1] == pytest.approx(1.0, abs=1e-6)
        assert found[NOTE_B][0] == pytest.approx(1.0, abs=1e-6)
        assert found[NOTE_B][1] is None  # no pieces yet
        assert found[TALK][0] == pytest.approx(0.0, abs=1e-6)
        assert found[TALK][1] is None
        assert store.piece_cosines(axis(1), model="other-model", ids=[NOTE_A]) == {}

    def test_pieces_go_with_their_chunk(self, store: IndexStore) -> None:
        _index(store)
        store.set_pieces(MODEL, {NOTE_A: [axis(3)], NOTE_B: [axis(3)]})

        # The file keeps chunk 0 (same id) and loses chunk 1.
        store.replace_file(make_file(), [make_chunk(0, "one")], [axis(0)], MODEL)

        assert store.chunks_without_pieces(MODEL) == []
        assert store.piece_cosines(axis(3), model=MODEL, ids=[NOTE_A])[NOTE_A][1] == (
            pytest.approx(1.0, abs=1e-6)
        )
        store.replace_file(
            make_file(), [make_chunk(0, "one"), make_chunk(1, "two")], [axis(0), axis(1)], MODEL
        )
        assert [c.id for c in store.chunks_without_pieces(MODEL)] == [NOTE_B]

        store.delete_file("memory", "memory/a.md")
        store.replace_file(make_file(), [make_chunk(0, "one")], [axis(0)], MODEL)
        assert [c.id for c in store.chunks_without_pieces(MODEL)] == [NOTE_A]

    def test_pieces_of_unknown_chunks_are_ignored(self, store: IndexStore) -> None:
        _index(store)

        store.set_pieces(MODEL, {ChunkId("memory:memory/gone.md:0"): [axis(0)]})

        assert [c.id for c in store.chunks_without_pieces(MODEL)] == [NOTE_A, NOTE_B]

    def test_a_walk_in_batches_goes_on_and_starts_again_at_the_end(self, store: IndexStore) -> None:
        _index(store)

        walked = [[c.id for c in store.chunks_without_pieces(MODEL, 1)] for _ in range(3)]

        # Nothing was given pieces, so the third call starts again from the first chunk.
        assert walked == [[NOTE_A], [NOTE_B], [NOTE_A]]

    def test_a_chunk_that_gains_its_vector_after_a_walk_found_none_is_listed(
        self, store: IndexStore
    ) -> None:
        _index(store)
        store.set_pieces(MODEL, {NOTE_A: [axis(0)], NOTE_B: [axis(1)]})
        assert store.chunks_without_pieces(MODEL) == []
        late = make_chunk(0, "late", "memory/b.md")
        store.replace_file(make_file("memory/b.md"), [late], [None], "fts-only")
        assert store.chunks_without_pieces(MODEL) == []  # no vector yet: nothing to pair with

        store.set_vectors(MODEL, {late.id: axis(2)})

        assert [c.id for c in store.chunks_without_pieces(MODEL)] == [late.id]

    def test_pieces_owed_counts_from_the_first_whatever_the_walk_returned(
        self, store: IndexStore
    ) -> None:
        """A search's limit is checked against this count: a walk half way through must not
        make a long backlog look short."""
        _index(store)
        assert store.pieces_owed(MODEL, 5) == 2
        store.chunks_without_pieces(MODEL, 1)  # the walk now stands after NOTE_A

        assert store.pieces_owed(MODEL, 5) == 2
        assert store.pieces_owed(MODEL, 1) == 1  # counted up to `at_most`
        assert store.pieces_owed("other-model", 5) == 0

    def test_pieces_owed_follows_the_pieces_given_and_the_vectors_gained(
        self, store: IndexStore
    ) -> None:
        _index(store)
        store.set_pieces(MODEL, {NOTE_A: [axis(0)], NOTE_B: [axis(1)]})
        assert store.pieces_owed(MODEL, 5) == 0
        late = make_chunk(0, "late", "memory/b.md")
        store.replace_file(make_file("memory/b.md"), [late], [None], "fts-only")
        assert store.pieces_owed(MODEL, 5) == 0  # no vector yet

        store.set_vectors(MODEL, {late.id: axis(2)})

        assert store.pieces_owed(MODEL, 5) == 1
