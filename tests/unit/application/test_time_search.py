"""Searcher: hits carry their time, `since` / `until` filter strictly, time words boost."""

from __future__ import annotations

import calendar

import pytest

from memlane.application.embedding_runtime import EmbeddingRuntime, Selection
from memlane.application.indexing import FilePreparer, write_prepared
from memlane.application.ports.embedding import EmbeddingProvider
from memlane.application.queries import Searcher
from memlane.application.reports import SearchResponse
from memlane.domain.chunks import ChunkingPolicy
from memlane.domain.config import MemorySettings, QuerySettings
from memlane.domain.errors import InvalidQuery
from memlane.domain.search import SearchQuery
from tests.fakes.embedding import FakeEmbeddingProvider
from tests.fakes.file_source import FakeFileSource
from tests.fakes.index_store import FakeIndexStore
from tests.unit.application.conftest import message


def _at(y: int, m: int, d: int, h: int = 0) -> float:
    return float(calendar.timegm((y, m, d, h, 0, 0)))


ASKED = _at(2026, 11, 20, 12)  # a Friday
NOTES = {
    "memory/2026-11-10.md": "# Retry policy\n\nThe retry policy retry policy is now exponential backoff.\n",
    "memory/2026-10-01.md": "# Retry policy\n\nThe retry policy retry policy was fixed.\n",
    "notes/old.md": "# Retry policy\n\nThe retry policy retry policy was linear.\n",
}


def _index(provider: EmbeddingProvider | None) -> FakeIndexStore:
    memory = FakeFileSource(source_name="memory")
    sessions = FakeFileSource(source_name="sessions")
    for path, text in NOTES.items():
        memory.write(path, text, mtime=_at(2026, 1, 5))
    sessions.write(
        "sessions/s.jsonl",
        message("user", "the retry policy again?", "2026-11-19T08:00:00Z")
        + message("assistant", "yes, the retry policy", "2026-11-19T08:05:00Z"),
        mtime=_at(2026, 11, 19, 9),
    )
    preparer = FilePreparer({"memory": memory, "sessions": sessions}, ChunkingPolicy())
    store = FakeIndexStore()
    for source, path in [("memory", p) for p in NOTES] + [("sessions", "sessions/s.jsonl")]:
        write_prepared(store, preparer.prepare(source, path), provider)  # type: ignore[arg-type]
    return store


def _searcher(
    store: FakeIndexStore,
    provider: EmbeddingProvider | None,
    boost: float,
    order: float = 0.0,
    when: float = 0.0,
) -> Searcher:
    settings = MemorySettings(
        query=QuerySettings(
            min_score=0.0, time_boost=boost, time_order_boost=order, when_boost=when
        )
    )
    runtime = EmbeddingRuntime(lambda: Selection(provider=provider, fallback_from=None))
    return Searcher(store=store, runtime=runtime, settings=settings)


def _search(s: Searcher, text: str, **kwargs: object) -> SearchResponse:
    return s.search(SearchQuery(text, **kwargs), now=ASKED)  # type: ignore[arg-type]


@pytest.fixture(params=["keyword", "hybrid"])
def provider(request: pytest.FixtureRequest) -> EmbeddingProvider | None:
    return None if request.param == "keyword" else FakeEmbeddingProvider()


class TestTimeOnHits:
    def test_every_hit_says_when_it_was_written(self, provider: EmbeddingProvider | None) -> None:
        response = _search(_searcher(_index(provider), provider, 0.0), "retry policy")

        times = {r.path: r.time for r in response.results}
        assert times["memory/2026-11-10.md"] == "2026-11-10T00:00:00Z/2026-11-10T23:59:59Z"
        assert times["notes/old.md"] == "2026-01-05T00:00:00Z"
        assert times["sessions/s.jsonl"] == "2026-11-19T08:00:00Z/2026-11-19T08:05:00Z"


class TestFilter:
    def test_since_and_until_keep_only_the_window(self, provider: EmbeddingProvider | None) -> None:
        s = _searcher(_index(provider), provider, 0.0)

        response = _search(s, "retry policy", since=_at(2026, 11, 1), until=_at(2026, 11, 15) - 1)

        assert [r.path for r in response.results] == ["memory/2026-11-10.md"]

    def test_an_empty_window_is_refused(self) -> None:
        s = _searcher(_index(None), None, 0.0)

        with pytest.raises(InvalidQuery, match="empty"):
            _search(s, "retry policy", since=_at(2026, 11, 15), until=_at(2026, 11, 1))


class TestTimeWords:
    def test_a_window_in_the_question_lifts_the_hits_inside_it(
        self, provider: EmbeddingProvider | None
    ) -> None:
        store = _index(provider)
        plain = _search(_searcher(store, provider, 0.0), "retry policy last week")
        boosted = _search(_searcher(store, provider, 1.0), "retry policy last week", as_of=ASKED)

        assert plain.results[0].path != "memory/2026-11-10.md"
        assert boosted.results[0].path == "memory/2026-11-10.md"

    def test_no_time_word_changes_nothing(self, provider: EmbeddingProvider | None) -> None:
        store = _index(provider)
        plain = _search(_searcher(store, provider, 0.0), "retry policy", explain=True)
        boosted = _search(_searcher(store, provider, 0.9), "retry policy", explain=True)

        assert [(r.path, r.score) for r in boosted.results] == [
            (r.path, r.score) for r in plain.results
        ]
        assert boosted.time_words is None
        assert all(r.explanation and r.explanation.time_boost == 1.0 for r in boosted.results)

    def test_explain_shows_the_window_and_each_boost(self) -> None:
        s = _searcher(_index(None), None, 0.5)

        response = _search(s, "retry policy last week", explain=True, as_of=ASKED)

        assert response.time_words == '"last week" → 2026-11-09..2026-11-15'
        boosts = {r.path: r.explanation.time_boost for r in response.results if r.explanation}
        assert boosts["memory/2026-11-10.md"] == 1.0
        assert boosts["notes/old.md"] == pytest.approx(1 / 1.5)

    def test_as_of_moves_the_window(self) -> None:
        s = _searcher(_index(None), None, 0.5)

        response = _search(s, "retry policy yesterday", explain=True, as_of=_at(2026, 10, 2, 9))

        assert response.time_words == '"yesterday" → 2026-10-01'
        assert response.results[0].path == "memory/2026-10-01.md"

    def test_the_most_recent_prefers_the_latest_candidates(self) -> None:
        store = _index(None)
        plain = _search(_searcher(store, None, 0.0), "most recent retry policy")
        response = _search(
            _searcher(store, None, 0.0, order=1.0), "most recent retry policy", explain=True
        )

        notes = [r.path for r in response.results if r.path.endswith(".md")]
        assert [r.path for r in plain.results if r.path.endswith(".md")] != notes
        assert notes == ["memory/2026-11-10.md", "memory/2026-10-01.md", "notes/old.md"]
        assert response.time_words == 'latest ("most recent")'

    def test_ordering_words_change_nothing_without_their_own_strength(self) -> None:
        store = _index(None)
        plain = _search(_searcher(store, None, 0.0), "most recent retry policy")
        windowed = _search(_searcher(store, None, 1.0), "most recent retry policy")

        assert [(r.path, r.score) for r in windowed.results] == [
            (r.path, r.score) for r in plain.results
        ]


def _deploy_notes() -> FakeIndexStore:
    memory = FakeFileSource(source_name="memory")
    notes = {
        "notes/a.md": "# Billing deploy\n\nThe billing service deploy, the billing deploy plan.\n",
        "notes/b.md": "# Billing\n\nWe did the deploy of billing yesterday.\n",
    }
    for path, text in notes.items():
        memory.write(path, text, mtime=_at(2026, 1, 5))
    preparer = FilePreparer({"memory": memory}, ChunkingPolicy())
    store = FakeIndexStore()
    for path in notes:
        write_prepared(store, preparer.prepare("memory", path), None)
    return store


class TestWhenQuestions:
    QUESTION = "When did we deploy the billing service?"

    def test_a_when_question_lifts_the_hit_that_says_when(self) -> None:
        store = _deploy_notes()
        plain = _search(_searcher(store, None, 0.0), self.QUESTION, as_of=ASKED)
        boosted = _search(_searcher(store, None, 0.0, when=1.0), self.QUESTION, as_of=ASKED)

        assert plain.results[0].path == "notes/a.md"
        assert boosted.results[0].path == "notes/b.md"

    def test_explain_says_the_question_asks_when(self) -> None:
        response = _search(
            _searcher(_deploy_notes(), None, 0.0, when=1.0), self.QUESTION, explain=True
        )

        assert response.time_words == 'asks when ("when did")'
        boosts = {r.path: r.explanation.time_boost for r in response.results if r.explanation}
        assert boosts["notes/b.md"] > boosts["notes/a.md"]

    def test_without_its_strength_nothing_moves(self) -> None:
        store = _deploy_notes()
        plain = _search(_searcher(store, None, 0.0), self.QUESTION)
        unboosted = _search(_searcher(store, None, 1.0, order=1.0), self.QUESTION)

        assert [(r.path, r.score) for r in unboosted.results] == [
            (r.path, r.score) for r in plain.results
        ]
