"""OllamaEmbeddingProvider: /api/embed batches, legacy /api/embeddings fallback, no key needed."""

from __future__ import annotations

import httpx
import pytest

from memlane.adapters.embedding._http_options import HttpOptions
from memlane.adapters.embedding.ollama import OllamaEmbeddingProvider
from memlane.application.ports.embedding import EmbeddingRejected
from tests.integration.embedding._support import Script, body_of, raw_vector, status

pytestmark = pytest.mark.integration


def embed_ok(request: httpx.Request) -> httpx.Response:
    n = len(body_of(request)["input"])
    return httpx.Response(
        200,
        json={"model": "nomic-embed-text", "embeddings": [raw_vector(768, i) for i in range(n)]},
    )


def legacy_ok(request: httpx.Request) -> httpx.Response:
    assert request.url.path == "/api/embeddings"
    return httpx.Response(200, json={"embedding": raw_vector(768, len(body_of(request)["prompt"]))})


NOT_FOUND = status(404, {"error": "404 page not found"})


class TestOllamaRequests:
    def test_current_endpoint_embeds_a_batch_in_one_request(self) -> None:
        script = Script([embed_ok])
        provider = OllamaEmbeddingProvider(
            HttpOptions(base_url="http://gpu-box:11434/v1/", transport=script.transport)
        )

        vectors = provider.embed_documents(["a", "b", "c"])

        request = script.requests[0]
        assert str(request.url) == "http://gpu-box:11434/api/embed"
        assert "authorization" not in request.headers
        assert body_of(request) == {"model": "nomic-embed-text", "input": ["a", "b", "c"]}
        assert len(vectors) == 3

    def test_old_servers_fall_back_to_the_legacy_endpoint_for_good(self) -> None:
        script = Script([NOT_FOUND, legacy_ok, legacy_ok, legacy_ok])
        provider = OllamaEmbeddingProvider(
            HttpOptions(model="ollama/nomic-embed-text:latest", transport=script.transport)
        )

        first = provider.embed_documents(["a", "bb"])
        provider.embed_query("ccc")

        assert provider.uses_legacy_endpoint
        assert [r.url.path for r in script.requests] == [
            "/api/embed",
            "/api/embeddings",
            "/api/embeddings",
            "/api/embeddings",
        ]
        assert body_of(script.requests[1]) == {"model": "nomic-embed-text:latest", "prompt": "a"}
        assert len(first) == 2
        assert provider.dimensions == 768

    def test_a_missing_model_is_reported_not_mistaken_for_an_old_server(self) -> None:
        script = Script(
            [status(404, {"error": 'model "nomic-embed-text" not found, try pulling it first'})]
        )
        provider = OllamaEmbeddingProvider(HttpOptions(transport=script.transport))

        with pytest.raises(EmbeddingRejected, match="not found"):
            provider.embed_query("q")
        assert len(script.requests) == 1

    def test_a_legacy_response_without_embedding_is_rejected(self) -> None:
        script = Script([NOT_FOUND, status(200, {"nothing": True})])
        provider = OllamaEmbeddingProvider(HttpOptions(transport=script.transport))

        with pytest.raises(EmbeddingRejected, match="embedding"):
            provider.embed_query("q")

    def test_a_configured_key_is_sent_as_bearer(self) -> None:
        script = Script([embed_ok])
        provider = OllamaEmbeddingProvider(
            HttpOptions(api_key="proxy-token", transport=script.transport)
        )

        provider.embed_query("q")

        assert script.requests[0].headers["authorization"] == "Bearer proxy-token"
