"""VoyageEmbeddingProvider: input types, request shape, Voyage's `detail` error bodies."""

from __future__ import annotations

import httpx
import pytest

from memlane.adapters.embedding._http_options import HttpOptions
from memlane.adapters.embedding.voyage import VoyageEmbeddingProvider
from memlane.application.ports.embedding import EmbeddingRejected, ProviderNotConfigured
from tests.integration.embedding._support import SECRET, Script, body_of, raw_vector, status

pytestmark = pytest.mark.integration


def ok(request: httpx.Request) -> httpx.Response:
    n = len(body_of(request)["input"])
    data = [{"object": "embedding", "embedding": raw_vector(1024, i), "index": i} for i in range(n)]
    return httpx.Response(
        200,
        json={
            "object": "list",
            "data": data,
            "model": "voyage-4-large",
            "usage": {"total_tokens": 4},
        },
    )


class TestVoyageRequests:
    def test_queries_and_documents_use_their_input_types(self) -> None:
        script = Script([ok, ok])
        provider = VoyageEmbeddingProvider(HttpOptions(api_key=SECRET, transport=script.transport))

        provider.embed_query("q")
        provider.embed_documents(["d1", "d2"])

        query, docs = script.requests
        assert str(query.url) == "https://api.voyageai.com/v1/embeddings"
        assert query.headers["authorization"] == f"Bearer {SECRET}"
        assert body_of(query) == {"model": "voyage-4-large", "input": ["q"], "input_type": "query"}
        assert body_of(docs) == {
            "model": "voyage-4-large",
            "input": ["d1", "d2"],
            "input_type": "document",
        }

    def test_output_dimension_is_sent_when_configured(self) -> None:
        def small(request: httpx.Request) -> httpx.Response:
            return httpx.Response(
                200, json={"data": [{"embedding": raw_vector(256, 0), "index": 0}]}
            )

        script = Script([small])
        provider = VoyageEmbeddingProvider(
            HttpOptions(
                api_key=SECRET,
                model="voyage/voyage-4-large",
                dimensions=256,
                transport=script.transport,
            )
        )

        provider.embed_documents(["d"])

        assert body_of(script.requests[0])["output_dimension"] == 256
        assert provider.dimensions == 256

    def test_detail_error_body_is_reported(self) -> None:
        script = Script([status(401, {"detail": "Provided API key is invalid."})])
        provider = VoyageEmbeddingProvider(HttpOptions(api_key=SECRET, transport=script.transport))

        with pytest.raises(EmbeddingRejected, match="Provided API key is invalid"):
            provider.embed_query("q")

    def test_missing_key_is_not_configured(self) -> None:
        with pytest.raises(ProviderNotConfigured):
            VoyageEmbeddingProvider(HttpOptions(api_key=None))
