"""Contract: every IndexStore (fake, SQLite, PostgreSQL) answers vector and keyword searches alike."""

from __future__ import annotations

import math

import pytest

from memlane.application.ports.index_store import (
    DimensionMismatch,
    IndexStore,
    StoreError,
)
from memlane.domain.keywords import build_fts_query
from memlane.domain.sources import ALL_SOURCES
from tests.contract._index_store_support import (
    MODEL,
    axis,
    ids,
    make_chunk,
    make_file,
    seed,
)
from tests.contract._index_store_support import store as store  # noqa: PLC0414 (the fixture)


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

    @pytest.mark.parametrize(
        ("text", "query"),
        [
            ("Set relevanceFloor to 0.8 for strict searches", "relevance floor"),
            ("The relevance floor removes weak hits", "what is relevanceFloor"),
            ("Call getUserProfile before caching", "user profile"),
        ],
    )
    def test_a_camel_case_name_and_its_words_find_each_other(
        self, store: IndexStore, text: str, query: str
    ) -> None:
        """An identifier's words are indexed, and a query's identifier brings its words."""
        store.replace_file(
            make_file(),
            [make_chunk(0, text), make_chunk(1, "An unrelated line about lunch")],
            [None, None],
            "fts-only",
        )
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
