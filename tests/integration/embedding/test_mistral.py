"""MistralEmbeddingProvider: OpenAI-like request and response, flat error bodies."""

from __future__ import annotations

import httpx
import pytest

from memlane.adapters.embedding._http_options import HttpOptions
from memlane.adapters.embedding.mistral import MistralEmbeddingProvider
from memlane.application.ports.embedding import EmbeddingRejected, ProviderNotConfigured
from tests.integration.embedding._support import SECRET, Script, body_of, raw_vector, status

pytestmark = pytest.mark.integration


def ok(request: httpx.Request) -> httpx.Response:
    n = len(body_of(request)["input"])
    data = [{"object": "embedding", "embedding": raw_vector(1024, i), "index": i} for i in range(n)]
    return httpx.Response(
        200,
        json={
            "id": "e1",
            "object": "list",
            "data": data,
            "model": "mistral-embed",
            "usage": {"prompt_tokens": 4, "total_tokens": 4},
        },
    )


class TestMistralRequests:
    def test_request_matches_the_embeddings_api(self) -> None:
        script = Script([ok])
        provider = MistralEmbeddingProvider(
            HttpOptions(api_key=SECRET, model="mistral/mistral-embed", transport=script.transport)
        )

        vectors = provider.embed_documents(["bonjour", "hello"])

        request = script.requests[0]
        assert str(request.url) == "https://api.mistral.ai/v1/embeddings"
        assert request.headers["authorization"] == f"Bearer {SECRET}"
        assert body_of(request) == {"model": "mistral-embed", "input": ["bonjour", "hello"]}
        assert len(vectors) == 2
        assert provider.dimensions == 1024

    def test_flat_error_body_is_final_for_a_422(self) -> None:
        error = {
            "object": "error",
            "message": "Input is too long (1536 tokens)",
            "type": "invalid_request_error",
            "code": None,
        }
        script = Script([status(422, error)])
        provider = MistralEmbeddingProvider(HttpOptions(api_key=SECRET, transport=script.transport))

        with pytest.raises(EmbeddingRejected, match=r"422.*too long"):
            provider.embed_documents(["a"])
        assert len(script.requests) == 1

    def test_missing_key_is_not_configured(self) -> None:
        with pytest.raises(ProviderNotConfigured):
            MistralEmbeddingProvider(HttpOptions(api_key=None))
