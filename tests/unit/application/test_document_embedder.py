"""Embedding chunks through the cache, splitting what the model cannot take whole."""

from __future__ import annotations

import math

from memlane.application.document_embedder import DocumentEmbedder
from memlane.domain.chunks import Chunk, ChunkId, ContentHash
from memlane.domain.hashing import sha256_text
from tests.fakes.embedding import FakeEmbeddingProvider
from tests.fakes.index_store import FakeIndexStore


def chunk(text: str, i: int = 0) -> Chunk:
    return Chunk(
        id=ChunkId(f"c{i}"),
        source="memory",
        path="a.md",
        start_line=1,
        end_line=1,
        text=text,
        hash=ContentHash(sha256_text(text)),
    )


class TestDocumentEmbedder:
    def test_cached_texts_are_not_embedded_again(self) -> None:
        provider, store = FakeEmbeddingProvider(), FakeIndexStore()
        DocumentEmbedder(provider, store).embed([chunk("alpha beta")])

        outcome = DocumentEmbedder(provider, store).embed([chunk("alpha beta"), chunk("gamma", 1)])

        assert (outcome.embedded, outcome.cached) == (1, 1)
        assert provider.embedded_texts == ["alpha beta", "gamma"]

    def test_identical_texts_in_one_call_are_embedded_once(self) -> None:
        provider = FakeEmbeddingProvider()

        outcome = DocumentEmbedder(provider, FakeIndexStore()).embed(
            [chunk("same text", 0), chunk("same text", 1)]
        )

        assert provider.embedded_texts == ["same text"]
        assert outcome.vectors[0] == outcome.vectors[1]

    def test_a_text_over_the_model_limit_is_split_and_averaged(self) -> None:
        provider = FakeEmbeddingProvider(max_input_tokens=20)
        long_text = " ".join(f"word{i}" for i in range(60))

        outcome = DocumentEmbedder(provider, FakeIndexStore()).embed([chunk(long_text)])

        pieces = provider.embedded_texts
        assert len(pieces) > 1
        assert "".join(pieces) == long_text
        assert all(len(p.encode()) <= 20 for p in pieces)
        assert math.isclose(math.fsum(x * x for x in outcome.vectors[0]), 1.0, rel_tol=1e-9)
