"""GeminiEmbeddingProvider: embedContent / batchEmbedContents shapes, task types, dimensionality."""

from __future__ import annotations

import math

import httpx
import pytest

from memlane.adapters.embedding._http_options import HttpOptions
from memlane.adapters.embedding.gemini import GeminiEmbeddingProvider
from memlane.application.ports.embedding import EmbeddingRejected, ProviderNotConfigured
from tests.integration.embedding._support import SECRET, Script, body_of, raw_vector, status
from tests.loopback_http import QuietHandler, serving

pytestmark = pytest.mark.integration
BASE = "https://generativelanguage.googleapis.com/v1beta"


def single(dims: int) -> httpx.Response:
    return httpx.Response(200, json={"embedding": {"values": raw_vector(dims, 0)}})


def batch(dims: int, n: int) -> httpx.Response:
    return httpx.Response(
        200, json={"embeddings": [{"values": raw_vector(dims, i)} for i in range(n)]}
    )


class TestGeminiRequests:
    def test_query_uses_embed_content_with_the_query_task_type(self) -> None:
        script = Script([lambda r: single(3072)])
        provider = GeminiEmbeddingProvider(HttpOptions(api_key=SECRET, transport=script.transport))

        vector = provider.embed_query("where is my passport")

        request = script.requests[0]
        assert request.method == "POST"
        assert str(request.url) == f"{BASE}/models/gemini-embedding-001:embedContent"
        assert request.headers["x-goog-api-key"] == SECRET
        assert SECRET not in str(request.url)
        assert "authorization" not in request.headers
        assert body_of(request) == {
            "model": "models/gemini-embedding-001",
            "content": {"parts": [{"text": "where is my passport"}]},
            "taskType": "RETRIEVAL_QUERY",
        }
        assert math.isclose(math.hypot(*vector), 1.0)

    def test_documents_use_batch_embed_contents_with_output_dimensionality(self) -> None:
        script = Script([lambda r: batch(768, 2)])
        provider = GeminiEmbeddingProvider(
            HttpOptions(
                api_key=SECRET,
                model="models/gemini-embedding-001",
                dimensions=768,
                transport=script.transport,
            )
        )

        vectors = provider.embed_documents(["a", "b"])

        request = script.requests[0]
        assert request.url.path == "/v1beta/models/gemini-embedding-001:batchEmbedContents"
        assert body_of(request) == {
            "requests": [
                {
                    "model": "models/gemini-embedding-001",
                    "content": {"parts": [{"text": t}]},
                    "taskType": "RETRIEVAL_DOCUMENT",
                    "outputDimensionality": 768,
                }
                for t in ("a", "b")
            ]
        }
        # Truncated Gemini vectors are not unit length: we normalise them.
        assert all(math.isclose(math.hypot(*v), 1.0) for v in vectors)
        assert provider.dimensions == 768

    def test_at_most_100_requests_per_batch_call(self) -> None:
        # The two requests run concurrently, so each answer is sized from its own request.
        def sized(request: httpx.Request) -> httpx.Response:
            return batch(3072, len(body_of(request)["requests"]))

        script = Script([sized, sized])
        provider = GeminiEmbeddingProvider(HttpOptions(api_key=SECRET, transport=script.transport))

        vectors = provider.embed_documents(["t"] * 120)

        assert len(vectors) == 120
        assert sorted(len(body_of(r)["requests"]) for r in script.requests) == [20, 100]

    def test_openai_compatibility_base_url_is_trimmed(self) -> None:
        script = Script([lambda r: single(3072)])
        provider = GeminiEmbeddingProvider(
            HttpOptions(
                api_key=SECRET,
                base_url=f"{BASE}/openai/",
                model="gemini/gemini-embedding-001",
                transport=script.transport,
            )
        )

        provider.embed_query("q")

        assert str(script.requests[0].url) == f"{BASE}/models/gemini-embedding-001:embedContent"

    def test_a_gateway_whose_host_starts_with_openai_is_kept_whole(self) -> None:
        script = Script([lambda r: single(3072)])
        gateway = "https://openai-gw.corp.example/v1beta"
        provider = GeminiEmbeddingProvider(
            HttpOptions(api_key=SECRET, base_url=gateway, transport=script.transport)
        )

        provider.embed_query("q")

        assert str(script.requests[0].url) == f"{gateway}/models/gemini-embedding-001:embedContent"

    def test_a_path_segment_starting_with_openai_is_kept_over_the_wire(self) -> None:
        paths: list[str] = []

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                self.json_body()
                paths.append(self.path)
                self.reply_json(200, {"embedding": {"values": raw_vector(3072, 0)}})

        with serving(Handler) as root:
            provider = GeminiEmbeddingProvider(
                HttpOptions(api_key=SECRET, base_url=f"{root}/openaiproxy/v1beta")
            )
            vector = provider.embed_query("q")

        assert paths == ["/openaiproxy/v1beta/models/gemini-embedding-001:embedContent"]
        assert math.isclose(math.hypot(*vector), 1.0)

    def test_bad_argument_is_final(self) -> None:
        error = {
            "error": {"code": 400, "message": "API key not valid", "status": "INVALID_ARGUMENT"}
        }
        script = Script([status(400, error)])
        provider = GeminiEmbeddingProvider(HttpOptions(api_key=SECRET, transport=script.transport))

        with pytest.raises(EmbeddingRejected, match="INVALID_ARGUMENT"):
            provider.embed_query("q")

    def test_a_response_without_embeddings_is_rejected(self) -> None:
        script = Script([status(200, {"something": "else"})])
        provider = GeminiEmbeddingProvider(HttpOptions(api_key=SECRET, transport=script.transport))

        with pytest.raises(EmbeddingRejected, match="embeddings"):
            provider.embed_documents(["a"])

    def test_preview_model_only_accepts_its_fixed_sizes(self) -> None:
        with pytest.raises(ProviderNotConfigured, match="outputDimensionality"):
            GeminiEmbeddingProvider(
                HttpOptions(api_key=SECRET, model="gemini-embedding-2-preview", dimensions=1000)
            )

    def test_missing_key_is_not_configured(self) -> None:
        with pytest.raises(ProviderNotConfigured):
            GeminiEmbeddingProvider(HttpOptions(api_key=""))

    def test_output_dimensionality_changes_the_key(self) -> None:
        full = GeminiEmbeddingProvider(HttpOptions(api_key=SECRET))
        small = GeminiEmbeddingProvider(HttpOptions(api_key=SECRET, dimensions=768))
        other_key = GeminiEmbeddingProvider(HttpOptions(api_key="another-secret"))

        assert full.key != small.key
        assert full.key == other_key.key
