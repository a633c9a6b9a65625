"""Searcher: hits are marked with their standing above the query's background, and a search
with no strong match says `no_strong_match` (hybrid: the legs disagree; vector-only: the best
candidate does not stand out); nothing is removed by default."""

from __future__ import annotations

from memlane.application.embedding_runtime import EmbeddingRuntime, Selection
from memlane.application.indexing import FilePreparer, write_prepared
from memlane.application.ports.embedding import EmbeddingProvider
from memlane.application.queries import Searcher
from memlane.application.reports import SearchResponse
from memlane.domain.chunks import ChunkingPolicy
from memlane.domain.config import HybridSettings, MemorySettings, QuerySettings
from memlane.domain.search import SearchQuery
from tests.fakes.embedding import FakeEmbeddingProvider
from tests.fakes.file_source import FakeFileSource
from tests.fakes.index_store import FakeIndexStore

FILLER = [
    "gardening tomatoes compost soil",
    "bicycle repair chain gears",
    "violin practice scales",
    "sourdough starter flour water",
    "hiking boots trail map",
    "chess opening gambit",
    "aquarium filter fish tank",
    "knitting wool scarf pattern",
    "pottery clay wheel kiln",
    "astronomy telescope lens stars",
    "camping tent stove fuel",
    "origami paper crane fold",
    "surfing board wave wax",
    "painting canvas oil brush",
    "jazz piano chord voicing",
    "beekeeping hive honey smoke",
    "woodworking chisel oak joint",
    "running shoes marathon pace",
]
NOW = 1_800_000_000.0


def _store(provider: EmbeddingProvider, notes: dict[str, str] | None = None) -> FakeIndexStore:
    memory = FakeFileSource(source_name="memory")
    if notes is None:
        notes = {f"memory/n{i}.md": f"# Note\n\n{text}\n" for i, text in enumerate(FILLER)}
        notes["memory/billing.md"] = "# Billing\n\nPriya owns the billing service invoices.\n"
    for path, text in notes.items():
        memory.write(path, text)
    preparer = FilePreparer({"memory": memory}, ChunkingPolicy())
    store = FakeIndexStore()
    for path in notes:
        write_prepared(store, preparer.prepare("memory", path), provider)
    return store


def _search(
    provider: EmbeddingProvider | None,
    text: str,
    notes: dict[str, str] | None = None,
    **query: object,
) -> SearchResponse:
    store = _store(provider or FakeEmbeddingProvider(dimensions=512), notes)
    settings = MemorySettings(query=QuerySettings(min_score=0.0, **query))  # type: ignore[arg-type]
    runtime = EmbeddingRuntime(lambda: Selection(provider=provider))
    searcher = Searcher(store=store, runtime=runtime, settings=settings)
    return searcher.search(SearchQuery(text), now=NOW)


def test_a_question_the_memory_answers_is_a_strong_match() -> None:
    response = _search(FakeEmbeddingProvider(dimensions=512), "who owns billing service invoices")
    assert response.results[0].path == "memory/billing.md"
    assert response.no_strong_match is False
    top = response.results[0].confidence
    assert top is not None and top >= 3.0
    others = [r.confidence for r in response.results[1:] if r.confidence is not None]
    assert others and max(others) < top


def test_a_foreign_question_keeps_its_hits_but_is_flagged() -> None:
    response = _search(
        FakeEmbeddingProvider(dimensions=512), "quantum chromodynamics gluon lattice"
    )
    assert response.results  # marked, not removed: the floor is off by default
    assert response.no_strong_match is True


def test_the_opt_in_floor_still_removes() -> None:
    response = _search(
        FakeEmbeddingProvider(dimensions=512),
        "quantum chromodynamics gluon lattice",
        relevance_floor=0.99,
    )
    assert response.results == []


def test_keyword_only_search_is_not_judged() -> None:
    response = _search(None, "billing")
    assert response.mode == "keyword"
    assert response.no_strong_match is None
    assert all(r.confidence is None for r in response.results)


def test_vector_only_search_is_judged_too() -> None:
    response = _search(
        FakeEmbeddingProvider(dimensions=512),
        "who owns billing",
        hybrid=HybridSettings(enabled=False),
    )
    assert response.mode == "vector"
    assert response.no_strong_match is False
    assert all(r.confidence is not None for r in response.results)


# Ten near-identical notes: every weather question finds a plateau of look-alikes.
WEATHER = {
    f"memory/day-{d:02d}.md": f"# Day {d}\n\nThe weather on day {d} was mild and cloudy.\n"
    for d in range(1, 11)
}


def test_hybrid_search_judges_by_the_legs_agreement_not_the_plateau() -> None:
    provider = FakeEmbeddingProvider(dimensions=512)
    asked = _search(provider, "what was the weather like", WEATHER)
    assert asked.mode == "hybrid" and asked.no_strong_match is False  # its words find them
    vector_only = _search(
        provider, "what was the weather like", WEATHER, hybrid=HybridSettings(enabled=False)
    )
    assert vector_only.no_strong_match is True  # the same plateau, judged by the top gap
    foreign = _search(provider, "chess tournament winner", WEATHER)
    assert foreign.no_strong_match is True and len(foreign.results) == 6
