"""Searcher on a FakeIndexStore: modes, degraded legs, min score, sources, citations."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memlane.application.embedding_runtime import EmbeddingRuntime, Selection
from memlane.application.indexing import FilePreparer, backfill_pieces_batch, write_prepared
from memlane.application.ports.embedding import EmbeddingProvider, EmbeddingUnavailable, Vector
from memlane.application.queries import Searcher
from memlane.application.reports import SearchResponse
from memlane.domain.chunks import ChunkingPolicy
from memlane.domain.config import HybridSettings, MemorySettings, QuerySettings
from memlane.domain.errors import InvalidQuery
from memlane.domain.search import SearchQuery
from tests.fakes.embedding import FakeEmbeddingProvider
from tests.fakes.file_source import FakeFileSource
from tests.fakes.index_store import FakeIndexStore
from tests.unit.application.conftest import message

NOTES = {
    "memory/billing.md": "# Billing\n\nPriya owns the billing service.\nBilling runs nightly.\n",
    "memory/deploy.md": "# Deploys\n\nWe deploy the ingest service every Tuesday.\n",
    "memory/cats.md": "# Pets\n\nThe office cat is called Miso.\n",
}
NOW = 1_800_000_000.0


def index(provider: EmbeddingProvider | None) -> FakeIndexStore:
    memory = FakeFileSource(source_name="memory")
    sessions = FakeFileSource(source_name="sessions")
    for path, text in NOTES.items():
        memory.write(path, text)
    sessions.write("sessions/s.jsonl", message("user", "who owns the billing service?"))
    preparer = FilePreparer({"memory": memory, "sessions": sessions}, ChunkingPolicy())
    store = FakeIndexStore()
    for source, path in [("memory", p) for p in NOTES] + [("sessions", "sessions/s.jsonl")]:
        write_prepared(store, preparer.prepare(source, path), provider)  # type: ignore[arg-type]
    if provider is not None:  # as a sync's backfill leaves it: the notes' pieces embedded
        while backfill_pieces_batch(store, provider):
            pass
    return store


def searcher(
    store: FakeIndexStore,
    provider: EmbeddingProvider | None,
    *,
    min_score: float = 0.0,
    hybrid: HybridSettings | None = None,
    fallback_from: str | None = None,
    relevance_floor: float | None = None,
    term_share: float | None = None,
    keyword_term_share: float | None = None,
) -> Searcher:
    settings = MemorySettings(
        query=QuerySettings(
            min_score=min_score,
            hybrid=hybrid or HybridSettings(),
            relevance_floor=relevance_floor,
            relevance_term_share=term_share,
            relevance_keyword_term_share=keyword_term_share,
        )
    )
    runtime = EmbeddingRuntime(lambda: Selection(provider=provider, fallback_from=fallback_from))
    return Searcher(store=store, runtime=runtime, settings=settings)


def search(s: Searcher, text: str, **kwargs: object) -> SearchResponse:
    return s.search(SearchQuery(text, **kwargs), now=NOW)  # type: ignore[arg-type]


def _paths(response: SearchResponse) -> list[str]:
    return [r.path for r in response.results]


class ZeroQuery(FakeEmbeddingProvider):
    """Embeds documents normally but every query to the zero vector."""

    def embed_query(self, text: str) -> Vector:
        return [0.0] * self.dimensions


class TestModes:
    def test_without_a_provider_the_search_is_keyword_only(self) -> None:
        response = search(searcher(index(None), None), "billing")

        assert (response.mode, response.provider, response.model) == ("keyword", "none", None)
        assert _paths(response)[0] == "memory/billing.md"

    def test_with_a_provider_both_legs_are_fused(self) -> None:
        provider = FakeEmbeddingProvider()

        response = search(searcher(index(provider), provider), "who owns billing")

        assert (response.mode, response.provider, response.model) == (
            "hybrid",
            "fake",
            "fake-bag-of-words",
        )
        assert response.warnings == ()
        assert "memory/billing.md" in _paths(response)

    def test_with_hybrid_off_only_vectors_rank(self) -> None:
        provider = FakeEmbeddingProvider()
        s = searcher(index(provider), provider, hybrid=HybridSettings(enabled=False))

        response = search(s, "office cat Miso", explain=True)

        assert response.mode == "vector"
        assert all(r.explanation is not None for r in response.results)
        assert all(
            r.explanation is not None and r.explanation.text_score is None for r in response.results
        )

    def test_the_fallback_provider_is_named_in_the_response(self) -> None:
        provider = FakeEmbeddingProvider()

        response = search(searcher(index(provider), provider, fallback_from="openai"), "cat")

        assert response.fallback == "openai"


class TestStopWordsOnly:
    """#30.5: "what is it" asks for nothing: no hits (both legs would rank filler words), and
    a warning that says why."""

    @pytest.mark.parametrize("provider", [None, FakeEmbeddingProvider()], ids=["keyword", "hybrid"])
    def test_a_query_of_stop_words_gets_no_hits_and_says_why(
        self, provider: FakeEmbeddingProvider | None
    ) -> None:
        s = searcher(index(provider), provider)

        response = search(s, "What is it?")

        assert response.results == []
        assert response.warnings == (
            "the query has only stop words (what, is, it): nothing to search for; ask with the "
            "words that matter (a name, a topic, a term from the notes)",
        )

    @pytest.mark.parametrize("query", ["*", ": ?", '"', "+ = $", "。"])
    def test_a_query_of_marks_only_gets_no_hits_and_says_why(self, query: str) -> None:
        provider = FakeEmbeddingProvider()
        s = searcher(index(provider), provider)

        response = search(s, query)

        assert response.results == []
        (warning,) = response.warnings
        assert warning.startswith(f"the query {query.strip()!r} holds no word")

    def test_a_pictograph_is_searched(self) -> None:
        provider = FakeEmbeddingProvider()

        response = search(searcher(index(provider), provider), "🚫")

        assert response.results and not response.warnings

    def test_one_content_word_is_enough_to_search(self) -> None:
        provider = FakeEmbeddingProvider()

        response = search(searcher(index(provider), provider), "what is billing")

        assert "memory/billing.md" in _paths(response)
        assert not any("stop words" in w for w in response.warnings)


class TestDegradedVectorLeg:
    def test_a_failing_query_embedding_falls_back_to_keywords_with_a_warning(self) -> None:
        provider = FakeEmbeddingProvider()
        store = index(provider)
        provider.fail_next(EmbeddingUnavailable("rate limited"))

        response = search(searcher(store, provider), "billing")

        assert _paths(response)[0] == "memory/billing.md"
        (warning,) = response.warnings
        assert warning.startswith("embedding provider fake failed (rate limited); keyword results")
        assert "rate limited" in warning

    def test_in_vector_mode_a_failing_query_embedding_answers_from_keywords(self) -> None:
        provider = FakeEmbeddingProvider()
        store = index(provider)
        provider.fail_next(EmbeddingUnavailable("down"))
        s = searcher(store, provider, hybrid=HybridSettings(enabled=False))

        response = search(s, "billing")

        assert response.mode == "keyword"
        assert _paths(response)[0] == "memory/billing.md"
        assert len(response.warnings) == 1

    def test_a_dimension_mismatch_skips_the_vector_leg_with_a_warning(self) -> None:
        store = index(FakeEmbeddingProvider(dimensions=16))
        narrow = FakeEmbeddingProvider(dimensions=8)
        # Vector mode: a hybrid search would not run the leg at all, since no chunk has a
        # vector of this model yet (it answers by keywords and says how far the vectors are).
        vector_only = searcher(store, narrow, hybrid=HybridSettings(enabled=False))

        response = search(vector_only, "billing")

        assert _paths(response)[0] == "memory/billing.md"
        (warning,) = response.warnings
        assert warning.startswith("vector search skipped until the index is re-embedded")

    def test_a_zero_query_vector_skips_the_vector_leg_silently(self) -> None:
        provider = ZeroQuery()
        store = index(provider)

        response = search(searcher(store, provider), "billing", explain=True)

        assert response.warnings == ()
        assert _paths(response)[0] == "memory/billing.md"
        assert all(
            r.explanation is not None and r.explanation.vector_score is None
            for r in response.results
        )


class TestMinScore:
    def test_the_query_value_overrides_the_configured_one(self) -> None:
        s = searcher(index(None), None, min_score=0.0)

        everything = search(s, "billing service")
        strict = search(s, "billing service", min_score=1.0)

        assert len(everything.results) > 1
        # Keyword-only: only the best keyword hit (normalised score 1.0) reaches 1.0.
        assert _paths(strict) == [_paths(everything)[0]]

    def test_by_default_no_keyword_only_hit_is_dropped_for_its_score(self) -> None:
        # A keyword-only hit scores its bm25 as a share of the best match's: a long note that
        # names the word once scores far under the reference's 0.35 beside one full of it.
        memory = FakeFileSource(source_name="memory")
        memory.write("memory/runs.md", "Nightly runs. " * 20)
        memory.write("memory/log.md", "filler words here. " * 60 + "The nightly job failed once.\n")
        preparer = FilePreparer({"memory": memory}, ChunkingPolicy())
        store = FakeIndexStore()
        for path in ("memory/runs.md", "memory/log.md"):
            write_prepared(store, preparer.prepare("memory", path), None)
        default = Searcher(
            store=store,
            runtime=EmbeddingRuntime(lambda: Selection(provider=None, fallback_from=None)),
            settings=MemorySettings(),
        )

        kept = search(default, "nightly")
        cut = search(default, "nightly", min_score=0.35)

        assert "memory/log.md" in _paths(kept)
        assert min(r.score for r in kept.results) < 0.35
        assert "memory/log.md" not in _paths(cut)

    def test_the_configured_value_applies_when_the_query_has_none(self) -> None:
        strict = search(searcher(index(None), None, min_score=1.0), "billing service")

        assert len(strict.results) == 1

    def test_with_relative_fusion_the_best_keyword_hit_survives_any_min_score(self) -> None:
        provider = FakeEmbeddingProvider()
        s = searcher(index(provider), provider, hybrid=HybridSettings(fusion="rrf"))

        response = search(s, "nightly", min_score=1.0)

        assert _paths(response) == ["memory/billing.md"]

    def test_with_weighted_fusion_the_top_keyword_hit_passes_at_its_text_weight(self) -> None:
        provider = ZeroQuery()  # keyword leg only: the top hit scores text_weight x 1.0
        s = searcher(index(provider), provider, hybrid=HybridSettings(fusion="weighted"))

        everything = search(s, "billing service")
        strict = search(s, "billing service", min_score=0.9)

        assert len(everything.results) > 1
        assert _paths(strict) == _paths(everything)[:1]
        assert strict.results[0].score == 0.5


class TestResults:
    def test_sources_limit_the_search(self) -> None:
        s = searcher(index(None), None)

        both = search(s, "billing")
        sessions_only = search(s, "billing", sources=("sessions",))

        assert {r.source for r in both.results} == {"memory", "sessions"}
        assert _paths(sessions_only) == ["sessions/s.jsonl"]

    def test_max_results_cuts_the_ranking(self) -> None:
        s = searcher(index(None), None)

        full = search(s, "billing service")
        one = search(s, "billing service", max_results=1)

        assert _paths(one) == _paths(full)[:1]

    def test_citations_name_the_lines_in_the_snippet(self) -> None:
        response = search(searcher(index(None), None), "Miso").results[0]
        with_citation = searcher(index(None), None).search(
            SearchQuery("Miso"), now=NOW, citations=True
        )

        (hit,) = with_citation.results
        assert hit.citation == "memory/cats.md#L1-L3"
        assert hit.snippet.endswith("\n\nSource: memory/cats.md#L1-L3")
        assert response.citation is None

    def test_a_long_chunk_shows_the_lines_holding_the_query_words(self) -> None:
        memory = FakeFileSource(source_name="memory")
        steps = [f"{i}. Check the service health, then restart the pods." for i in range(1, 25)]
        steps[19] = "NOTE: the failover bridge's recovery word is quokka-lighthouse."
        memory.write("memory/runbook.md", "\n".join(steps) + "\n")
        store = FakeIndexStore()
        preparer = FilePreparer({"memory": memory}, ChunkingPolicy())
        write_prepared(store, preparer.prepare("memory", "memory/runbook.md"), None)

        (hit,) = search(searcher(store, None), "failover bridge recovery word").results

        assert hit.start_line == 1  # the hit is the whole chunk; its snippet shows line 20
        assert "quokka-lighthouse" in hit.snippet and hit.snippet.startswith("… ")

    def test_scores_are_rounded_and_explanations_only_on_request(self) -> None:
        s = searcher(index(None), None)

        plain = search(s, "billing")
        explained = search(s, "billing", explain=True)

        assert all(r.explanation is None for r in plain.results)
        ranks = [r.explanation.mmr_rank for r in explained.results if r.explanation is not None]
        assert ranks == list(range(1, len(explained.results) + 1))
        assert all(round(r.score, 6) == r.score for r in plain.results)

    def test_a_query_of_stop_words_only_still_searches_them(self) -> None:
        response = search(searcher(index(None), None), "the")

        assert response.mode == "keyword"

    def test_temporal_decay_lowers_old_transcripts(self) -> None:
        store = index(None)
        plain = searcher(store, None)
        decaying = Searcher(
            store=store,
            runtime=EmbeddingRuntime(lambda: Selection(provider=None)),
            settings=MemorySettings(
                query=QuerySettings(
                    min_score=0.0,
                    hybrid=replace(
                        HybridSettings(),
                        temporal_decay=replace(
                            HybridSettings().temporal_decay, enabled=True, half_life_days=1
                        ),
                    ),
                )
            ),
        )

        fresh = search(plain, "billing", sources=("sessions",), explain=True).results[0]
        old = search(decaying, "billing", sources=("sessions",), explain=True).results[0]

        assert old.score < fresh.score
        assert old.explanation is not None and old.explanation.decay_factor < 1.0


class TestValidation:
    @pytest.mark.parametrize(
        ("kwargs", "message_part"),
        [
            ({"max_results": True}, "maxResults must be a whole number"),
            ({"max_results": 2.5}, "maxResults must be a whole number"),
            ({"max_results": 101}, "maxResults must be between 1 and 100"),
            ({"min_score": True}, "minScore must be a number"),
            ({"min_score": "0.5"}, "minScore must be a number"),
            ({"min_score": -0.1}, "minScore must be between 0 and 1"),
        ],
    )
    def test_bad_limits_are_invalid_queries(
        self, kwargs: dict[str, object], message_part: str
    ) -> None:
        with pytest.raises(InvalidQuery, match=message_part):
            search(searcher(index(None), None), "billing", **kwargs)

    def test_whitespace_is_not_a_query(self) -> None:
        with pytest.raises(InvalidQuery, match="query required"):
            search(searcher(index(None), None), " \n\t ")


class TestRelevanceFloor:
    """The fake model has no calibrated floor, so these configure one (a cosine)."""

    def test_the_floor_only_removes_hits_and_keeps_their_order_and_scores(self) -> None:
        provider = FakeEmbeddingProvider()
        store = index(provider)
        unfloored = search(searcher(store, provider, relevance_floor=0.0), "billing", explain=True)
        cosines = sorted(
            r.explanation.vector_score
            for r in unfloored.results
            if r.explanation is not None and r.explanation.vector_score is not None
        )
        floor = cosines[len(cosines) // 2]  # the median: some hits fall below it, some do not

        floored = search(
            searcher(store, provider, relevance_floor=floor, term_share=0.0), "billing"
        )

        expected = [
            (r.path, r.start_line, r.score)
            for r in unfloored.results
            if r.explanation is not None
            and r.explanation.vector_score is not None
            and r.explanation.vector_score >= floor
        ]
        assert 0 < len(expected) < len(unfloored.results)
        assert [(r.path, r.start_line, r.score) for r in floored.results] == expected

    def test_a_query_nothing_is_close_to_gets_no_hits(self) -> None:
        provider = FakeEmbeddingProvider()
        store = index(provider)

        unfloored = search(searcher(store, provider, relevance_floor=0.0), "quantum chromodynamics")
        floored = search(searcher(store, provider, relevance_floor=0.99), "quantum chromodynamics")

        assert unfloored.results  # relative fusion ranks even a pool of strangers
        assert floored.results == []

    def test_a_hit_needs_the_query_words_for_its_cosine_to_count(self) -> None:
        provider = FakeEmbeddingProvider()
        store = index(provider)
        query = "billing zebra"  # every hit lacks "zebra": half the words at most

        cosine_only = search(searcher(store, provider, relevance_floor=0.01, term_share=0.0), query)
        half = search(searcher(store, provider, relevance_floor=0.01, term_share=0.5), query)
        every_word = searcher(
            store, provider, relevance_floor=0.01, term_share=1.0, keyword_term_share=1.0
        )
        all_words = search(every_word, query)

        with_billing = [r for r in cosine_only.results if "billing" in r.snippet.lower()]
        assert 0 < len(with_billing) < len(cosine_only.results)
        assert [r.path for r in half.results] == [r.path for r in with_billing]
        assert all_words.results == []

    def test_by_default_a_cosine_needs_a_fifth_of_the_query_words(self) -> None:
        provider = FakeEmbeddingProvider()
        store = index(provider)
        query = "billing zebra"  # a hit holding "billing" holds half the words

        cosine_only = search(searcher(store, provider, relevance_floor=0.01, term_share=0.0), query)
        default = search(searcher(store, provider, relevance_floor=0.01), query)

        with_billing = [r.path for r in cosine_only.results if "billing" in r.snippet.lower()]
        assert 0 < len(with_billing) < len(cosine_only.results)
        assert [r.path for r in default.results] == with_billing

    def test_keyword_only_search_is_not_floored(self) -> None:
        store = index(None)

        unfloored = search(searcher(store, None, relevance_floor=0.0), "billing service")
        floored = search(searcher(store, None, relevance_floor=0.99), "billing service")

        assert unfloored.results
        assert floored.results == unfloored.results
