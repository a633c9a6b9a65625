"""Searcher over several agents' indexes: one pool, hits named by agent, comparability."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memlane.application.embedding_runtime import EmbeddingRuntime, Selection
from memlane.application.indexing import FilePreparer, write_prepared
from memlane.application.ports.embedding import EmbeddingProvider
from memlane.application.queries import Searcher
from memlane.domain.agents import AgentsNotComparable
from memlane.domain.chunks import ChunkingPolicy
from memlane.domain.config import MemorySettings, QuerySettings
from memlane.domain.index_meta import IndexMeta
from memlane.domain.search import SearchQuery
from tests.fakes.embedding import FakeEmbeddingProvider
from tests.fakes.file_source import FakeFileSource
from tests.fakes.index_store import FakeIndexStore
from tests.unit.application.test_queries import NOW, index


def _searcher(store: FakeIndexStore, provider: EmbeddingProvider | None) -> Searcher:
    runtime = EmbeddingRuntime(lambda: Selection(provider=provider))
    settings = MemorySettings(query=QuerySettings(min_score=0.0, relevance_floor=0.0))
    return Searcher(store=store, runtime=runtime, settings=settings)


def _meta(model: str, dimensions: int | None) -> IndexMeta:
    return IndexMeta(
        schema_version=1, chunker_version=2, sources=("memory",), scope_hash="s",
        chunk_tokens=400, chunk_overlap=80, provider="fake", model=model,
        provider_key=FakeEmbeddingProvider().key if model == "fake-bag-of-words" else "k",
        dimensions=dimensions,
    )  # fmt: skip


def _single_note(text: str) -> FakeIndexStore:
    memory = FakeFileSource(source_name="memory")
    memory.write("memory/other.md", text)
    store = FakeIndexStore()
    preparer = FilePreparer({"memory": memory}, ChunkingPolicy())
    write_prepared(store, preparer.prepare("memory", "memory/other.md"), None)
    return store


class TestSearchAcrossAgents:
    def test_keyword_evidence_is_pooled_not_ranked_per_agent(self) -> None:
        """A passing mention in agent b does not tie agent a's strong match (its own best)."""
        weak = _single_note(
            "# Misc\n\n" + "Lunch menus, parking rules, team photos. " * 8 + "billing"
        )

        response = _searcher(index(None), None).search(
            SearchQuery("billing", max_results=20), now=NOW, stores=[("a", None), ("b", weak)]
        )

        top = response.results[0]
        other = next(r for r in response.results if r.agent == "b")
        assert (top.agent, top.path) == ("a", "memory/billing.md")
        assert other.score < top.score

    @pytest.mark.parametrize("keyword_only", [False, True])
    def test_twin_indexes_give_each_hit_twice_with_equal_scores(self, keyword_only: bool) -> None:
        provider = None if keyword_only else FakeEmbeddingProvider()
        own, twin = index(provider), index(provider)
        query = SearchQuery("who owns billing", max_results=20)

        response = _searcher(own, provider).search(
            query, now=NOW, stores=[("a", None), ("b", twin)]
        )

        by_hit: dict[tuple[str, int], dict[str, float]] = {}
        for r in response.results:
            assert r.agent is not None
            by_hit.setdefault((r.path, r.start_line), {})[r.agent] = r.score
        assert by_hit
        assert all(set(scores) == {"a", "b"} for scores in by_hit.values())
        assert all(scores["a"] == scores["b"] for scores in by_hit.values())

    def test_one_agent_listed_is_the_plain_search_with_agent_names(self) -> None:
        provider = FakeEmbeddingProvider()
        store = index(provider)
        searcher = _searcher(store, provider)
        query = SearchQuery("deploy ingest service", max_results=10)

        plain = searcher.search(query, now=NOW)
        listed = searcher.search(query, now=NOW, stores=[("a", None)])

        assert [(r.path, r.score, r.agent) for r in listed.results] == [
            (r.path, r.score, "a") for r in plain.results
        ]
        assert all(r.agent is None for r in plain.results)

    def test_another_embedding_model_is_refused(self) -> None:
        provider = FakeEmbeddingProvider()
        own, other = index(provider), index(provider)
        own.set_meta(_meta("fake-bag-of-words", 16))
        other.set_meta(_meta("another-model", 8))

        with pytest.raises(AgentsNotComparable, match=r"b \(fake/another-model\)"):
            _searcher(own, provider).search(
                SearchQuery("billing"), now=NOW, stores=[("a", None), ("b", other)]
            )

    def test_a_keyword_only_index_is_not_refused(self) -> None:
        provider = FakeEmbeddingProvider()
        own, other = index(provider), index(None)
        other.set_meta(_meta("fts-only", None))

        response = _searcher(own, provider).search(
            SearchQuery("billing", max_results=20), now=NOW, stores=[("a", None), ("b", other)]
        )

        assert {r.agent for r in response.results} == {"a", "b"}


def _keyword_only_by_config() -> FakeIndexStore:
    """An agent whose own process runs with `provider: "none"` (its index records that)."""
    store = index(None)
    store.set_meta(replace(_meta("fts-only", None), provider="none", provider_key=""))
    return store


class TestKeywordOnlyAgent:
    """An agent keyword-only by design joins through its keyword leg; the others keep vectors."""

    def test_the_other_agents_keep_their_vector_leg(self) -> None:
        provider = FakeEmbeddingProvider()
        main, work = index(provider), _keyword_only_by_config()

        response = _searcher(main, provider).search(
            SearchQuery("who owns billing", max_results=20, explain=True),
            now=NOW,
            stores=[("main", None), ("work", work)],
        )

        assert response.mode == "hybrid"
        vectored = [r for r in response.results if r.agent == "main"]
        assert vectored and all(
            r.explanation is not None and r.explanation.vector_score is not None for r in vectored
        )
        assert any(r.agent == "work" for r in response.results)

    def test_the_warning_says_what_is_the_case(self) -> None:
        provider = FakeEmbeddingProvider()
        main, work = index(provider), _keyword_only_by_config()

        response = _searcher(main, provider).search(
            SearchQuery("billing"), now=NOW, stores=[("main", None), ("work", work)]
        )

        text = " ".join(response.warnings)
        assert "work: keyword-only" in text
        assert "until the vectors are embedded" not in text
        assert "vectors 0 /" not in text

    def test_only_keyword_only_agents_answer_by_keywords(self) -> None:
        provider = FakeEmbeddingProvider()
        main, work = index(provider), _keyword_only_by_config()

        response = _searcher(main, provider).search(
            SearchQuery("billing", max_results=20), now=NOW, stores=[("work", work)]
        )

        assert response.mode == "keyword"
        assert {r.agent for r in response.results} == {"work"}
        assert not any("until the vectors are embedded" in w for w in response.warnings)

    def test_an_agent_still_embedding_holds_the_search_at_keywords(self) -> None:
        """Not keyword-only by design (its index records a provider): the partial-vector rule."""
        provider = FakeEmbeddingProvider()
        main, beta = index(provider), index(None)
        beta.set_meta(_meta("fake-bag-of-words", 16))

        response = _searcher(main, provider).search(
            SearchQuery("billing"), now=NOW, stores=[("main", None), ("beta", beta)]
        )

        assert response.mode == "keyword"
        assert any("until the vectors are embedded" in w for w in response.warnings)


class TestNotesWithoutPieces:
    def test_the_warning_names_the_agents_whose_notes_have_no_pieces(self) -> None:
        """Another agent's pieces come from its own upkeep (never, with pieceWeight 0): the
        warning says whose notes ranked by their cosine alone, not just how many."""
        provider = FakeEmbeddingProvider()
        main = index(provider)  # pieces embedded, as a sync leaves them
        memory = FakeFileSource(source_name="memory")
        memory.write("memory/billing.md", "# Billing\n\nThe payments team owns billing.\n")
        work = FakeIndexStore()  # its vectors embedded, its pieces not (pieceWeight 0 there)
        preparer = FilePreparer({"memory": memory}, ChunkingPolicy())
        write_prepared(work, preparer.prepare("memory", "memory/billing.md"), provider)

        response = _searcher(main, provider).search(
            SearchQuery("who owns billing", max_results=20),
            now=NOW,
            stores=[("main", None), ("work", work)],
        )

        (warning,) = [w for w in response.warnings if "no piece vectors" in w]
        assert warning.startswith("1 of the notes ranked have no piece vectors yet (work: 1)")
        assert "query.pieceWeight is 0" in warning
