"""Contract: every IndexStore (in-memory fake, SQLite with sqlite-vec and FTS5, PostgreSQL with
pgvector and BM25 postings) behaves alike."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from memlane.adapters.postgres.database import PostgresDatabase
from memlane.adapters.postgres.postgres_index_store import PostgresIndexStore
from memlane.adapters.store import vector_code_index
from memlane.adapters.store.database import SqliteDatabase
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.adapters.store.vector_search import VectorSearch
from memlane.application.ports.index_store import (
    CacheKey,
    DimensionMismatch,
    IndexedFile,
    IndexStore,
    RecordedIssue,
    StoreError,
    SyncRecord,
    VectorProgress,
)
from memlane.domain.chunks import Chunk, ChunkId, ContentHash
from memlane.domain.index_meta import IndexMeta
from memlane.domain.keywords import build_fts_query
from memlane.domain.search import Candidate
from memlane.domain.sources import ALL_SOURCES, Source
from tests.fakes.index_store import FakeIndexStore
from tests.pg_server import unique_agent

MODEL = "test-model"


def make_file(path: str = "memory/a.md", source: Source = "memory", **kw: object) -> IndexedFile:
    values: dict[str, object] = {"hash": ContentHash(f"hash-{path}"), "mtime": 100.0, "size": 42}
    values.update(kw)
    return IndexedFile(source=source, path=path, **values)  # type: ignore[arg-type]


def make_chunk(
    n: int, text: str, path: str = "memory/a.md", source: Source = "memory", ts: float | None = None
) -> Chunk:
    return Chunk(
        id=ChunkId(f"{source}:{path}:{n}"),
        source=source,
        path=path,
        start_line=n * 10 + 1,
        end_line=n * 10 + 5,
        text=text,
        hash=ContentHash(f"h-{text}"),
        timestamp=ts,
    )


def axis(i: int, dims: int = 4) -> list[float]:
    return [1.0 if j == i else 0.0 for j in range(dims)]


def make_meta(dimensions: int | None = 4, model: str = MODEL) -> IndexMeta:
    return IndexMeta(
        schema_version=1,
        chunker_version=1,
        sources=("memory", "sessions"),
        scope_hash="scope",
        chunk_tokens=400,
        chunk_overlap=80,
        provider="fake",
        model=model,
        provider_key="key",
        dimensions=dimensions,
    )


@pytest.fixture(
    params=[
        "fake",
        pytest.param("sqlite", marks=pytest.mark.integration),
        # The default engine builds its code file only above MIN_ROWS vectors: force it here.
        pytest.param("sqlite-codefile", marks=pytest.mark.integration),
        pytest.param("sqlite-numpy", marks=pytest.mark.integration),
        pytest.param("postgres", marks=[pytest.mark.integration, pytest.mark.postgres]),
    ]
)
def store(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[IndexStore]:
    if request.param == "fake":
        yield FakeIndexStore()
        return
    if request.param == "postgres":
        pg = PostgresIndexStore(
            PostgresDatabase.open(request.getfixturevalue("pg_database")), unique_agent()
        )
        yield pg
        pg.close()
        return
    if request.param == "sqlite-codefile":
        monkeypatch.setattr(vector_code_index, "MIN_ROWS", 0)
    engine: VectorSearch = "numpy" if request.param == "sqlite-numpy" else "codes"
    real = SqliteIndexStore(SqliteDatabase.open(tmp_path / "index.db"), vector_search=engine)
    assert real.vector_status() == (True, None)
    yield real
    real.close()


def seed(store: IndexStore) -> None:
    """Two memory files and one session file, each chunk on its own axis."""
    store.replace_file(
        make_file("memory/a.md"),
        [make_chunk(0, "alpha apples"), make_chunk(1, "beta bananas")],
        [axis(0), axis(1)],
        MODEL,
    )
    store.replace_file(
        make_file("memory/b.md"),
        [make_chunk(0, "gamma grapes", path="memory/b.md")],
        [axis(2)],
        MODEL,
    )
    store.replace_file(
        make_file("sessions/s.jsonl", source="sessions"),
        [make_chunk(0, "delta dates apples", path="sessions/s.jsonl", source="sessions", ts=5.0)],
        [axis(3)],
        MODEL,
    )


def ids(candidates: Sequence[Candidate]) -> list[str]:
    return [c.chunk_id for c in candidates]


def stored(store: IndexStore) -> dict[str, Chunk]:
    """Every chunk in the store by id (no chunk has a vector of a model named like this)."""
    return {c.id: c for c in store.chunks_without_vectors("no-such-model", limit=10_000)}


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


class TestSearchVector:
    def test_nearest_first_with_cosine_scores(self, store: IndexStore) -> None:
        """Scores are cosine similarities, best first, with file mtime and timestamp."""
        seed(store)

        hits = store.search_vector([0.9, 0.1, 0.0, 0.3], model=MODEL, sources=ALL_SOURCES, limit=3)

        assert ids(hits) == [
            "memory:memory/a.md:0",
            "sessions:sessions/s.jsonl:0",
            "memory:memory/a.md:1",
        ]
        assert hits[0].score == pytest.approx(0.9 / math.sqrt(0.91), abs=1e-5)
        assert hits[0].file_mtime == 100.0
        assert hits[1].timestamp == 5.0

    def test_only_the_given_sources_and_model(self, store: IndexStore) -> None:
        seed(store)
        store.replace_file(
            make_file("memory/c.md"), [make_chunk(0, "other", path="memory/c.md")], [axis(3)], "m2"
        )

        hits = store.search_vector(axis(3), model=MODEL, sources=["memory"], limit=10)

        assert "sessions:sessions/s.jsonl:0" not in ids(hits)
        assert "memory:memory/c.md:0" not in ids(hits)
        assert len(hits) == 3

    def test_limit_is_respected(self, store: IndexStore) -> None:
        seed(store)

        assert len(store.search_vector(axis(0), model=MODEL, sources=ALL_SOURCES, limit=2)) == 2
        assert store.search_vector(axis(0), model=MODEL, sources=ALL_SOURCES, limit=0) == []

    def test_wrong_query_dimension_raises_and_keeps_the_index(self, store: IndexStore) -> None:
        """A query of another dimension never drops the vector table (only set_meta may)."""
        seed(store)

        with pytest.raises(DimensionMismatch):
            store.search_vector([1.0, 0.0], model=MODEL, sources=ALL_SOURCES, limit=3)

        assert len(store.search_vector(axis(1), model=MODEL, sources=ALL_SOURCES, limit=9)) == 4

    def test_empty_index_gives_nothing(self, store: IndexStore) -> None:
        assert store.search_vector(axis(0), model=MODEL, sources=ALL_SOURCES, limit=3) == []

    def test_zero_query_gives_nothing(self, store: IndexStore) -> None:
        seed(store)

        assert store.search_vector([0.0] * 4, model=MODEL, sources=ALL_SOURCES, limit=3) == []

    def test_nan_query_is_rejected(self, store: IndexStore) -> None:
        seed(store)

        with pytest.raises(StoreError):
            store.search_vector(
                [math.nan, 0.0, 0.0, 0.0], model=MODEL, sources=ALL_SOURCES, limit=3
            )


class TestBackgroundCosines:
    def test_the_first_chunks_by_id_make_the_sample(self, store: IndexStore) -> None:
        seed(store)  # ids in order: a.md:0, a.md:1, b.md:0, s.jsonl:0 on axes 0, 1, 2, 3
        scores = store.background_cosines([1.0, 1.0, 0.0, 0.0], model=MODEL, limit=3)
        assert [round(c, 4) for c in scores] == [0.7071, 0.7071, 0.0]
        assert len(store.background_cosines(axis(3), model=MODEL, limit=100)) == 4

    def test_no_vectors_of_the_model_no_sample(self, store: IndexStore) -> None:
        assert store.background_cosines(axis(0), model=MODEL, limit=10) == []
        seed(store)
        assert store.background_cosines(axis(0), model="other-model", limit=10) == []
        assert store.background_cosines(axis(0), model=MODEL, limit=0) == []


class TestSearchKeyword:
    def test_matches_with_negative_rank_best_first(self, store: IndexStore) -> None:
        """Scores are bm25 ranks: negative, lower is better."""
        store.replace_file(
            make_file(),
            [make_chunk(0, "alpha beta gamma delta"), make_chunk(1, "alpha alpha alpha beta")],
            [None, None],
            "fts-only",
        )

        hits = store.search_keyword('"alpha"', sources=ALL_SOURCES, limit=5)

        assert ids(hits) == ["memory:memory/a.md:1", "memory:memory/a.md:0"]
        assert hits[0].score < hits[1].score < 0

    def test_filters_by_source_and_limit(self, store: IndexStore) -> None:
        seed(store)

        assert ids(store.search_keyword('"apples"', sources=["sessions"], limit=5)) == [
            "sessions:sessions/s.jsonl:0"
        ]
        assert len(store.search_keyword('"apples"', sources=ALL_SOURCES, limit=1)) == 1

    @pytest.mark.parametrize("bad", ['"unbalanced', "AND (", "((", 'a" OR', "*", "NEAR("])
    def test_fts_syntax_errors_give_nothing(self, store: IndexStore, bad: str) -> None:
        """A malformed MATCH expression is an empty result, not an error."""
        seed(store)

        assert store.search_keyword(bad, sources=ALL_SOURCES, limit=5) == []

    def test_empty_match_gives_nothing(self, store: IndexStore) -> None:
        seed(store)

        assert store.search_keyword("  ", sources=ALL_SOURCES, limit=5) == []

    @pytest.mark.parametrize(
        ("text", "query"),
        [
            ("我们昨天讨论了新的部署方案", "方案"),
            ("東京で会議の資料を準備した", "会議"),
            ("서울에서 회의를 했다", "회의"),
        ],
    )
    def test_cjk_words_are_found_inside_sentences(
        self, store: IndexStore, text: str, query: str
    ) -> None:
        """Two-character CJK words match inside longer runs (fts_document + build_fts_query)."""
        store.replace_file(make_file(), [make_chunk(0, text)], [None], "fts-only")
        match = build_fts_query(query)
        assert match is not None

        assert ids(store.search_keyword(match, sources=ALL_SOURCES, limit=5)) == [
            "memory:memory/a.md:0"
        ]


class TestKeywordDocumentCounts:
    def test_rows_and_rows_holding_each_term(self, store: IndexStore) -> None:
        """bm25's N and n_i: tokenized as the keyword leg's phrases are (any case), counted
        once per row, none for an unknown word or a word without tokens."""
        seed(store)  # alpha apples / beta bananas / gamma grapes / delta dates apples

        total, counts = store.keyword_document_counts(["apples", "alpha", "zebra", "...", "APPLES"])

        assert total == 4
        assert counts == [2, 1, 0, 0, 2]

    def test_a_phrase_counts_the_rows_holding_it_in_order(self, store: IndexStore) -> None:
        store.replace_file(
            make_file(),
            [make_chunk(0, "e-mail sent"), make_chunk(1, "mail e"), make_chunk(2, "e mail")],
            [None, None, None],
            "fts-only",
        )

        assert store.keyword_document_counts(["e-mail"]) == (3, [2])

    def test_an_empty_index(self, store: IndexStore) -> None:
        assert store.keyword_document_counts(["alpha"]) == (0, [0])


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


KEY = CacheKey("fake", MODEL, "key")


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


class TestClose:
    def test_close_is_idempotent(self, store: IndexStore) -> None:
        store.close()
        store.close()
