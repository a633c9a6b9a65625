"""Contract: every IndexStore (fake, SQLite, PostgreSQL) records a first index, rebuilds, keeps its
sync state and closes alike.
"""

from __future__ import annotations

from memlane.application.ports.index_store import (
    IndexStore,
    RecordedIssue,
    SyncRecord,
)
from memlane.domain.chunks import ContentHash
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


class TestFirstIndex:
    """A first index written straight into the live store: its record, files done, its end."""

    def test_a_claimed_first_index_counts_files_until_the_meta_ends_it(
        self, store: IndexStore
    ) -> None:
        assert store.first_index() is None
        assert store.claim_first_index(make_meta(), 3)
        state = store.first_index()
        assert state is not None
        assert (state.meta, state.files_total, state.files_done) == (make_meta(), 3, 0)
        assert state.here and not state.running_elsewhere
        assert state.text() == "indexing 0 / 3 files (0 %)"

        store.replace_file(make_file(), [make_chunk(0, "one")], [None], "fts-only")
        store.replace_file(make_file("memory/b.md"), [], [], "fts-only")
        state = store.first_index()
        assert state is not None and state.files_done == 2
        assert state.text() == "indexing 2 / 3 files (66 %)"
        assert store.claim_first_index(make_meta(), 4)  # the same writer may claim again
        assert (store.first_index() or state).files_total == 4

        store.set_meta(make_meta())
        assert store.first_index() is None
        assert store.meta() == make_meta()


class TestRebuild:
    def test_live_index_is_untouched_until_commit(self, store: IndexStore) -> None:
        """Writes go aside; commit swaps them in whole."""
        seed(store)
        rebuild = store.begin_rebuild()
        rebuild.replace_file(
            make_file("memory/new.md"),
            [make_chunk(0, "fresh", path="memory/new.md")],
            [axis(1)],
            MODEL,
        )
        rebuild.set_meta(make_meta())

        assert len(store.files()) == 3

        rebuild.commit()

        assert [f.path for f in store.files()] == ["memory/new.md"]
        assert store.meta() == make_meta()
        hits = store.search_vector(axis(1), model=MODEL, sources=ALL_SOURCES, limit=5)
        assert ids(hits) == ["memory:memory/new.md:0"]

    def test_abort_keeps_the_old_index(self, store: IndexStore) -> None:
        seed(store)
        rebuild = store.begin_rebuild()
        rebuild.replace_file(make_file("memory/new.md"), [], [], MODEL)

        rebuild.abort()

        assert len(store.files()) == 3

    def test_cache_is_carried_over(self, store: IndexStore) -> None:
        """The rebuild sees the live cache; the live cache survives the swap."""
        store.cache_put(KEY, {ContentHash("old"): [1.0, 2.0]})
        rebuild = store.begin_rebuild()

        assert rebuild.cache_get(KEY, [ContentHash("old")]) == {ContentHash("old"): [1.0, 2.0]}
        rebuild.cache_put(KEY, {ContentHash("new"): [3.0, 4.0]})
        store.cache_put(KEY, {ContentHash("late"): [5.0, 6.0]})
        rebuild.commit()

        assert sorted(store.cache_get(KEY, [ContentHash(h) for h in ("old", "new", "late")])) == [
            "late",
            "new",
            "old",
        ]

    def test_the_last_sync_record_survives_the_swap(self, store: IndexStore) -> None:
        """Until the rebuilding sync records itself, the sync before it is the last one (a
        rebuild killed after its swap, during its vectors, left "last sync: never")."""
        before = SyncRecord("2026-12-01T10:00:00+00:00", "explicit", False, 3, 0)
        store.record_sync(before)
        rebuild = store.begin_rebuild()
        rebuild.replace_file(make_file(), [make_chunk(0, "new")], [axis(0)], MODEL)

        rebuild.commit()

        assert store.last_sync() == before


class TestSyncState:
    """What a sync leaves for a later process: its problems and when it last changed things."""

    def test_issues_are_replaced_as_a_whole(self, store: IndexStore) -> None:
        binary = RecordedIssue("memory", "memory/b.md", "binary file", mtime=2.5, size=8)
        listing = RecordedIssue("scan:memory", "memory", "no memory/ folder")
        store.replace_issues([listing, binary])

        assert store.issues() == [binary, listing]

        store.replace_issues([listing])

        assert store.issues() == [listing]

    def test_no_issues_and_no_sync_at_first(self, store: IndexStore) -> None:
        assert store.issues() == []
        assert store.last_sync() is None

    def test_the_last_recorded_sync_is_returned(self, store: IndexStore) -> None:
        first = SyncRecord("2026-01-01T00:00:00+00:00", "explicit", True, 3, 0)
        second = SyncRecord("2026-01-02T00:00:00+00:00", "watch", False, 1, 1)
        store.record_sync(first)
        store.record_sync(second)

        assert store.last_sync() == second

    def test_the_transcripts_held_back_are_kept_with_the_record(self, store: IndexStore) -> None:
        record = SyncRecord("2026-01-01T00:00:00+00:00", "watch", False, 0, 0, files_held_back=2)
        store.record_sync(record)

        assert store.last_sync() == record


class TestClose:
    def test_close_is_idempotent(self, store: IndexStore) -> None:
        store.close()
        store.close()
