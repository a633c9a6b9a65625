"""Item 14.9: a huge query is bounded: refused past MAX_QUERY_CHARS, else capped per leg."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from memlane.domain.embedding import MAX_QUERY_EMBED_TOKENS, query_embedding_input
from memlane.domain.errors import InvalidQuery
from memlane.domain.keywords import MAX_FTS_TERMS, fts_query_terms
from memlane.domain.search import MAX_QUERY_CHARS, Candidate, TimeWindow, check_query_text
from memlane.domain.sources import Source
from tests.fakes.embedding import FakeEmbeddingProvider
from tests.unit.application.test_queries import index, search, searcher

PASTE = " ".join(f"billing{i} service{i}" for i in range(8000))  # ~190 KB of distinct words
HUGE = PASTE[: 100 * 1024]  # a 100 KB paste, under the refusal limit


class RecordingStore:
    """Wraps the fake store to keep the MATCH expressions the keyword leg sends."""

    def __init__(self) -> None:
        self.store = index(None)
        self.matches: list[str] = []

    def search_keyword(
        self,
        match: str,
        *,
        sources: Sequence[Source],
        limit: int,
        window: TimeWindow | None = None,
    ) -> list[Candidate]:
        self.matches.append(match)
        return self.store.search_keyword(match, sources=sources, limit=limit, window=window)

    def __getattr__(self, name: str) -> object:
        return getattr(self.store, name)


class TestRefusal:
    @pytest.mark.parametrize("value", [None, 5, b"bytes", ["list"]])
    def test_a_query_that_is_not_a_string_is_invalid(self, value: object) -> None:
        with pytest.raises(InvalidQuery, match="query must be a string"):
            check_query_text(value)

    def test_past_the_limit_is_refused_and_at_the_limit_accepted(self) -> None:
        assert check_query_text("a" * MAX_QUERY_CHARS) == "a" * MAX_QUERY_CHARS
        with pytest.raises(InvalidQuery, match=f"at most {MAX_QUERY_CHARS}"):
            check_query_text("a" * (MAX_QUERY_CHARS + 1))

    def test_the_searcher_refuses_too_long_before_embedding(self) -> None:
        provider = FakeEmbeddingProvider()
        s = searcher(index(provider), provider)
        provider.calls.clear()
        with pytest.raises(InvalidQuery, match="query too long"):
            search(s, "billing " * MAX_QUERY_CHARS)
        assert provider.calls == []


class TestCaps:
    def test_an_ordinary_query_reaches_the_model_unchanged(self) -> None:
        text = "who owns the billing service, and when does billing run? " * 5  # 290 chars
        assert query_embedding_input(text, 512) == text

    def test_only_the_models_window_of_a_huge_query_is_embedded(self) -> None:
        provider = FakeEmbeddingProvider(max_input_tokens=512)
        s = searcher(index(provider), provider)
        provider.calls.clear()

        response = search(s, HUGE)

        (call,) = [c for c in provider.calls if c.kind == "query"]
        (embedded,) = call.texts
        assert HUGE.startswith(embedded)
        assert len(embedded) <= MAX_QUERY_EMBED_TOKENS * 4  # ~4 ASCII characters per token
        assert len(embedded) > MAX_QUERY_EMBED_TOKENS * 3  # the window is used, not a sliver
        assert response.mode == "hybrid"

    def test_a_smaller_model_window_wins(self) -> None:
        assert len(query_embedding_input(HUGE, 64)) <= 64 * 4

    def test_cjk_is_cut_at_about_one_token_per_character(self) -> None:
        cut = query_embedding_input("数据库迁移" * 20_000, 512)
        assert len(cut) == MAX_QUERY_EMBED_TOKENS

    def test_the_keyword_leg_searches_the_first_distinct_terms_only(self) -> None:
        recording = RecordingStore()
        s = searcher(recording, None)  # type: ignore[arg-type]

        response = search(s, "billing nightly " + HUGE)

        (match,) = recording.matches
        assert match.count(" OR ") == MAX_FTS_TERMS - 1
        assert match.startswith('"billing" OR "nightly"')
        assert response.results[0].path == "memory/billing.md"  # found by its first words

    def test_terms_are_the_same_as_before_for_a_normal_query(self) -> None:
        text = "the billing service runs nightly, who owns billing?"
        assert fts_query_terms(text) == ["billing", "service", "runs", "nightly", "owns"]


class TestTheCutsAreSaid:
    def test_a_huge_query_is_told_what_each_leg_used(self) -> None:
        provider = FakeEmbeddingProvider(max_input_tokens=512)
        s = searcher(index(provider), provider)

        warnings = search(s, HUGE).warnings

        embedded = [w for w in warnings if "vector search embedded its first" in w]
        assert len(embedded) == 1 and f"of {len(HUGE)} characters" in embedded[0]
        assert f"keyword search used its first {MAX_FTS_TERMS} distinct terms" in " ".join(warnings)

    def test_an_ordinary_query_gets_no_such_warning(self) -> None:
        provider = FakeEmbeddingProvider(max_input_tokens=512)
        s = searcher(index(provider), provider)

        warnings = search(s, "who owns the billing service, and when does billing run?").warnings

        assert not [w for w in warnings if "the query is long" in w]
