"""The vector leg scores a note chunk with its best piece too (domain/note_pieces.py)."""

from __future__ import annotations

import math

from memlane.application.embedding_runtime import EmbeddingRuntime, Selection
from memlane.application.ports.embedding import Vector
from memlane.application.ports.index_store import IndexedFile
from memlane.application.queries import Searcher
from memlane.domain.chunks import Chunk, ChunkId, ContentHash
from memlane.domain.config import HybridSettings, MemorySettings, QuerySettings
from memlane.domain.index_meta import vector_label
from memlane.domain.search import SearchQuery
from memlane.domain.sources import Source
from tests.fakes.embedding import FakeEmbeddingProvider
from tests.fakes.index_store import FakeIndexStore


class FixedQuery(FakeEmbeddingProvider):
    """Every query embeds to the second axis."""

    def embed_query(self, text: str) -> Vector:
        return [0.0, 1.0, 0.0, 0.0]


def _unit(*values: float) -> list[float]:
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values]


def _chunk(path: str, source: Source = "memory") -> Chunk:
    return Chunk(
        id=ChunkId(path),
        source=source,
        path=path,
        start_line=1,
        end_line=3,
        text=f"text of {path}",
        hash=ContentHash(path),
    )


def _store(provider: FakeEmbeddingProvider) -> FakeIndexStore:
    """A long note whose own vector misses the question but one piece of it hits it, a short
    note half way there, and a transcript chunk given pieces it should never be scored by."""
    label = vector_label(provider.model, provider.key)
    store = FakeIndexStore()
    placed: list[tuple[str, Source, list[float]]] = [
        ("memory/long.md", "memory", _unit(1, 0, 0, 0)),
        ("memory/short.md", "memory", _unit(0.9, 0.4, 0, 0)),
        ("sessions/s.jsonl", "sessions", _unit(0.95, 0.3, 0, 0)),
    ]
    for path, source, vector in placed:
        file = IndexedFile(source=source, path=path, hash=ContentHash(path), mtime=1.0, size=1)
        store.replace_file(file, [_chunk(path, source)], [vector], label)
    store.set_pieces(
        label,
        {
            ChunkId("memory/long.md"): [_unit(1, 0, 0, 0), _unit(0, 1, 0, 0)],
            ChunkId("sessions/s.jsonl"): [_unit(0, 1, 0, 0)],
        },
    )
    return store


def _paths(piece_weight: float) -> list[str]:
    provider = FixedQuery(dimensions=4)
    settings = MemorySettings(
        query=QuerySettings(piece_weight=piece_weight, hybrid=HybridSettings(enabled=False))
    )
    runtime = EmbeddingRuntime(lambda: Selection(provider=provider, fallback_from=None))
    searcher = Searcher(store=_store(provider), runtime=runtime, settings=settings)
    response = searcher.search(SearchQuery("retry policy"), now=0.0)
    assert response.mode == "vector"
    return [r.path for r in response.results]


def test_a_note_whose_best_piece_answers_ranks_first() -> None:
    # long.md: 0.5 * 0 + 0.5 * 1 = 0.5 against short.md's cosine 0.41 (no pieces).
    assert _paths(0.5)[0] == "memory/long.md"


def test_a_transcript_chunk_keeps_its_cosine_whatever_pieces_it_holds() -> None:
    found = _paths(0.5)

    # Its cosine 0.30 stays below short.md's 0.41; scored by its piece it would be 0.65.
    assert found.index("sessions/s.jsonl") > found.index("memory/short.md")


def test_piece_weight_zero_ranks_by_the_chunks_cosine_alone() -> None:
    assert _paths(0.0) == ["memory/short.md", "sessions/s.jsonl", "memory/long.md"]


def test_a_search_says_when_notes_it_ranked_have_no_pieces_yet() -> None:
    provider = FixedQuery(dimensions=4)
    settings = MemorySettings(query=QuerySettings(hybrid=HybridSettings(enabled=False)))
    runtime = EmbeddingRuntime(lambda: Selection(provider=provider, fallback_from=None))
    searcher = Searcher(store=_store(provider), runtime=runtime, settings=settings)

    response = searcher.search(SearchQuery("retry policy"), now=0.0)

    # short.md has its vector but no pieces; long.md has both; the transcript is not a note.
    assert any(w.startswith("1 of the notes ranked have no piece") for w in response.warnings)


def test_explain_shows_the_best_piece_a_note_was_scored_with() -> None:
    provider = FixedQuery(dimensions=4)
    settings = MemorySettings(query=QuerySettings(hybrid=HybridSettings(enabled=False)))
    runtime = EmbeddingRuntime(lambda: Selection(provider=provider, fallback_from=None))
    searcher = Searcher(store=_store(provider), runtime=runtime, settings=settings)

    response = searcher.search(SearchQuery("retry policy", explain=True), now=0.0)

    pieces = {
        r.path: r.explanation.best_piece for r in response.results if r.explanation is not None
    }
    assert set(pieces) == {"memory/long.md", "memory/short.md", "sessions/s.jsonl"}
    assert pieces["memory/long.md"] == 1.0  # its second piece lies on the question's axis
    assert pieces["memory/short.md"] is None  # no pieces embedded yet: its cosine alone
    assert pieces["sessions/s.jsonl"] is None  # a transcript is never scored by pieces
