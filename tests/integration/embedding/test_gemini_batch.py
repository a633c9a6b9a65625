"""Gemini async batch embedding: upload, asyncBatchEmbedContent, poll, download, fallback."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import structlog

from memlane.adapters.embedding._http_options import HttpOptions
from memlane.adapters.embedding.gemini import GeminiEmbeddingProvider
from memlane.domain.config import BatchSettings
from memlane.domain.embedding import sanitize_and_normalize
from tests.integration.embedding._support import SECRET, body_of, raw_vector

pytestmark = pytest.mark.integration

HOST = "https://generativelanguage.googleapis.com"
SESSION = f"{HOST}/upload/v1beta/files?upload_id=AUp-session-1&upload_protocol=resumable"
MODEL = "gemini-embedding-001"
DIMS = 3072
METADATA_TYPE = "type.googleapis.com/google.ai.generativelanguage.v1main.EmbedContentBatch"


def _settings(**overrides: Any) -> BatchSettings:
    values: dict[str, Any] = {"enabled": True, "poll_interval_ms": 1500, "timeout_minutes": 5}
    return BatchSettings(**{**values, **overrides})


@dataclass
class FakeGemini:
    """Plays the File API upload, asyncBatchEmbedContent, batches.get, download and the inline API.

    Every request is checked as it arrives: method, URL, the `x-goog-api-key` header, the body.
    """

    dims: int = DIMS
    states: list[str] = field(
        default_factory=lambda: ["BATCH_STATE_RUNNING", "BATCH_STATE_SUCCEEDED"]
    )
    result_in: str = "response"  # "response" (the REST guide) or "metadata" (the SDKs' reading)
    inline_results: bool = False
    output_lines: list[dict[str, Any]] | None = None
    create_status: int = 200
    failure: dict[str, Any] | None = None
    session_url: str = SESSION
    uploads: list[list[dict[str, Any]]] = field(default_factory=list)
    creates: list[dict[str, Any]] = field(default_factory=list)
    requests: list[httpx.Request] = field(default_factory=list)
    polls: int = 0
    inline_calls: int = 0
    declared_length: int = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        assert request.headers["x-goog-api-key"] == SECRET
        assert SECRET not in str(request.url)
        assert "authorization" not in request.headers
        path, method = request.url.path, request.method
        if method == "POST" and path == "/upload/v1beta/files" and not request.url.query:
            return self._start_upload(request)
        if method == "POST" and str(request.url) == SESSION:
            return self._finish_upload(request)
        if method == "POST" and path == f"/v1beta/models/{MODEL}:asyncBatchEmbedContent":
            return self._create(request)
        if method == "GET" and path == "/v1beta/batches/emb-123":
            assert not request.content
            self.polls += 1
            return httpx.Response(200, json=self._operation(self.states.pop(0)))
        if method == "GET" and path == "/download/v1beta/files/out-456:download":
            assert request.url.params["alt"] == "media"
            lines = self.output_lines if self.output_lines is not None else self._lines()
            return httpx.Response(200, text="\n".join(json.dumps(x) for x in lines) + "\n")
        if method == "POST" and path == f"/v1beta/models/{MODEL}:batchEmbedContents":
            self.inline_calls += 1
            n = len(body_of(request)["requests"])
            values = [{"values": raw_vector(self.dims, 100 + i)} for i in range(n)]
            return httpx.Response(200, json={"embeddings": values})
        raise AssertionError(f"unexpected {method} {request.url}")

    def _start_upload(self, request: httpx.Request) -> httpx.Response:
        assert request.headers["x-goog-upload-protocol"] == "resumable"
        assert request.headers["x-goog-upload-command"] == "start"
        assert request.headers["x-goog-upload-header-content-type"] == "application/jsonl"
        assert request.headers["content-type"] == "application/json"
        assert body_of(request) == {"file": {"displayName": "memlane-embeddings"}}
        self.declared_length = int(request.headers["x-goog-upload-header-content-length"])
        headers = {"x-goog-upload-url": self.session_url, "x-goog-upload-status": "active"}
        return httpx.Response(200, headers=headers)

    def _finish_upload(self, request: httpx.Request) -> httpx.Response:
        assert request.headers["x-goog-upload-command"] == "upload, finalize"
        assert request.headers["x-goog-upload-offset"] == "0"
        assert len(request.content) == self.declared_length
        lines = request.content.decode("utf-8").splitlines()
        self.uploads.append([json.loads(line) for line in lines])
        file = {
            "name": "files/in-123",
            "displayName": "memlane-embeddings",
            "mimeType": "application/jsonl",
            "sizeBytes": str(self.declared_length),
            "createTime": "2025-10-01T10:00:00.000000Z",
            "uri": f"{HOST}/v1beta/files/in-123",
            "state": "ACTIVE",
            "source": "UPLOADED",
        }
        return httpx.Response(200, json={"file": file})

    def _create(self, request: httpx.Request) -> httpx.Response:
        self.creates.append(body_of(request))
        if self.create_status == 404:
            error = {"code": 404, "message": "Method not found.", "status": "NOT_FOUND"}
            return httpx.Response(404, json={"error": error})
        return httpx.Response(200, json=self._operation("BATCH_STATE_PENDING"))

    def _operation(self, state: str) -> dict[str, Any]:
        metadata: dict[str, Any] = {
            "@type": METADATA_TYPE,
            "model": f"models/{MODEL}",
            "displayName": "memlane-embeddings",
            "inputConfig": {"fileName": "files/in-123"},
            "createTime": "2025-10-01T10:00:01.000000Z",
            "updateTime": "2025-10-01T10:00:02.000000Z",
            "batchStats": {"requestCount": "3", "pendingRequestCount": "3"},
            "state": state,
            "name": "batches/emb-123",
        }
        operation: dict[str, Any] = {"name": "batches/emb-123", "metadata": metadata}
        if state.endswith("SUCCEEDED"):
            output = self._output()
            operation["done"] = True
            if self.result_in == "response":
                operation["response"] = {"@type": METADATA_TYPE + "Output", **output}
            else:
                metadata["output"] = output
        elif state.endswith(("FAILED", "CANCELLED", "EXPIRED")):
            operation["done"] = True
            operation["error"] = self.failure or {"code": 13, "message": "internal failure"}
        return operation

    def _output(self) -> dict[str, Any]:
        if not self.inline_results:
            return {"responsesFile": "files/out-456"}
        responses = [
            {
                "metadata": {"key": line["key"]},
                "response": {"embedding": {"values": raw_vector(self.dims, int(line["key"]))}},
            }
            for line in self.uploads[-1]
        ]
        return {"inlinedResponses": {"inlinedResponses": responses}}

    def _lines(self) -> list[dict[str, Any]]:
        # Reversed: the mapping must rely on the keys, not on the order of the lines.
        return [
            {
                "key": line["key"],
                "response": {"embedding": {"values": raw_vector(self.dims, int(line["key"]))}},
            }
            for line in reversed(self.uploads[-1])
        ]


def _provider(server: FakeGemini, sleeps: list[float], **settings: Any) -> GeminiEmbeddingProvider:
    return GeminiEmbeddingProvider(
        HttpOptions(
            api_key=SECRET,
            transport=httpx.MockTransport(server),
            sleep=sleeps.append,
            batch=_settings(**settings),
            max_retries=0,
        )
    )


def _expected(count: int, dims: int = DIMS) -> list[list[float]]:
    return [sanitize_and_normalize(raw_vector(dims, i)) for i in range(count)]


class TestGeminiBatchHappyPath:
    def test_uploads_creates_polls_downloads_and_maps_results_back_by_key(self) -> None:
        server, sleeps = FakeGemini(), list[float]()
        provider = _provider(server, sleeps)

        vectors = provider.embed_documents(["first", "second", "third"])

        assert vectors == _expected(3)
        assert server.uploads == [
            [
                {
                    "key": str(i),
                    "request": {
                        "content": {"parts": [{"text": text}]},
                        "taskType": "RETRIEVAL_DOCUMENT",
                    },
                }
                for i, text in enumerate(["first", "second", "third"])
            ]
        ]
        assert server.creates == [
            {
                "batch": {
                    "displayName": "memlane-embeddings",
                    "inputConfig": {"fileName": "files/in-123"},
                }
            }
        ]
        assert [(r.method, r.url.path) for r in server.requests] == [
            ("POST", "/upload/v1beta/files"),
            ("POST", "/upload/v1beta/files"),
            ("POST", f"/v1beta/models/{MODEL}:asyncBatchEmbedContent"),
            ("GET", "/v1beta/batches/emb-123"),
            ("GET", "/v1beta/batches/emb-123"),
            ("GET", "/download/v1beta/files/out-456:download"),
        ]
        assert sleeps == [1.5, 1.5]
        assert server.inline_calls == 0
        assert provider.batch_active

    def test_polls_through_pending_and_running_states_at_the_configured_interval(self) -> None:
        server = FakeGemini(
            states=[
                "BATCH_STATE_PENDING",
                "BATCH_STATE_RUNNING",
                "BATCH_STATE_RUNNING",
                "BATCH_STATE_SUCCEEDED",
            ]
        )
        sleeps: list[float] = []
        provider = _provider(server, sleeps, poll_interval_ms=250)

        vectors = provider.embed_documents(["a", "b"])

        assert vectors == _expected(2)
        assert server.polls == 4
        assert sleeps == [0.25] * 4

    @pytest.mark.parametrize("prefix", ["BATCH_STATE_", "JOB_STATE_"])
    @pytest.mark.parametrize("result_in", ["response", "metadata"])
    def test_accepts_both_state_spellings_and_both_result_locations(
        self, prefix: str, result_in: str
    ) -> None:
        server = FakeGemini(states=[f"{prefix}RUNNING", f"{prefix}SUCCEEDED"], result_in=result_in)
        provider = _provider(server, [])

        vectors = provider.embed_documents(["a", "b", "c"])

        assert vectors == _expected(3)

    def test_reads_inlined_responses_when_the_batch_answers_them(self) -> None:
        server = FakeGemini(inline_results=True)
        provider = _provider(server, [])

        vectors = provider.embed_documents(["a", "b"])

        assert vectors == _expected(2)
        assert not any(r.url.path.startswith("/download/") for r in server.requests)

    def test_lines_carry_the_output_dimensionality(self) -> None:
        server = FakeGemini(dims=768)
        provider = GeminiEmbeddingProvider(
            HttpOptions(
                api_key=SECRET,
                dimensions=768,
                transport=httpx.MockTransport(server),
                sleep=lambda s: None,
                batch=_settings(),
            )
        )

        vectors = provider.embed_documents(["x"])

        assert vectors == _expected(1, dims=768)
        assert server.uploads[0][0]["request"]["outputDimensionality"] == 768


class TestGeminiBatchFailures:
    def test_a_failed_batch_falls_back_inline_and_two_failures_disable_batching(self) -> None:
        server = FakeGemini(
            states=["BATCH_STATE_FAILED", "BATCH_STATE_FAILED"],
            failure={"code": 3, "message": "Invalid request line 1"},
        )
        provider = _provider(server, [])

        with structlog.testing.capture_logs() as logs:
            first = provider.embed_documents(["a"])
            active_after_one_failure = provider.batch_active
            second = provider.embed_documents(["b"])
        third = provider.embed_documents(["c"])

        assert len(first) == len(second) == len(third) == 1
        assert active_after_one_failure
        assert not provider.batch_active
        assert len(server.uploads) == 2
        assert server.inline_calls == 3
        assert "Invalid request line 1" in logs[0]["error"]

    def test_a_cancelled_or_expired_batch_is_a_failure(self) -> None:
        server = FakeGemini(states=["JOB_STATE_EXPIRED"])
        provider = _provider(server, [])

        provider.embed_documents(["a"])

        assert server.inline_calls == 1
        assert provider.batch_active

    def test_a_timed_out_batch_is_retried_once_then_counts_twice(self) -> None:
        server = FakeGemini(states=["BATCH_STATE_RUNNING"] * 10)
        provider = _provider(server, [], poll_interval_ms=40_000, timeout_minutes=1)

        vectors = provider.embed_documents(["a", "b"])

        assert len(vectors) == 2
        assert len(server.uploads) == 2
        assert server.inline_calls == 1
        assert not provider.batch_active

    def test_a_404_on_async_batch_embed_content_disables_batching_at_once(self) -> None:
        server = FakeGemini(create_status=404)
        provider = _provider(server, [])

        with structlog.testing.capture_logs() as logs:
            first = provider.embed_documents(["a"])
        second = provider.embed_documents(["b"])

        assert len(first) == len(second) == 1
        assert not provider.batch_active
        assert len(server.creates) == 1
        assert server.inline_calls == 2
        assert "asyncBatchEmbedContent not available" in logs[0]["error"]
        assert logs[0]["batch_disabled"] is True

    def test_wait_off_with_an_unfinished_batch_falls_back_inline(self) -> None:
        server = FakeGemini(states=["BATCH_STATE_RUNNING"])
        provider = _provider(server, [], wait=False)

        provider.embed_documents(["a"])

        assert server.inline_calls == 1
        assert server.polls == 0
        assert provider.batch_active

    def test_an_error_line_fails_the_whole_group(self) -> None:
        server = FakeGemini()
        server.output_lines = [
            {"key": "0", "response": {"embedding": {"values": raw_vector(DIMS, 0)}}},
            {"key": "1", "error": {"code": 400, "message": "content too long"}},
        ]
        provider = _provider(server, [])

        vectors = provider.embed_documents(["a", "b"])

        assert vectors == [sanitize_and_normalize(raw_vector(DIMS, 100 + i)) for i in range(2)]
        assert server.inline_calls == 1

    def test_a_missing_key_fails_the_whole_group(self) -> None:
        server = FakeGemini()
        server.output_lines = [
            {"key": "1", "response": {"embedding": {"values": raw_vector(DIMS, 1)}}},
        ]
        provider = _provider(server, [])

        provider.embed_documents(["a", "b"])

        assert server.inline_calls == 1

    def test_an_upload_session_on_another_host_is_refused(self) -> None:
        server = FakeGemini(session_url="https://attacker.example/upload?id=1")
        provider = _provider(server, [])

        provider.embed_documents(["a"])

        assert all(r.url.host == "generativelanguage.googleapis.com" for r in server.requests)
        assert server.creates == []
        assert server.inline_calls == 1


class TestGeminiBatchSecrets:
    def test_the_api_key_is_never_in_a_url_nor_in_an_error_message(self) -> None:
        server = FakeGemini(
            states=["BATCH_STATE_FAILED", "BATCH_STATE_FAILED"],
            failure={"code": 7, "message": f"API key {SECRET} lacks batch permission"},
        )
        provider = _provider(server, [])

        with structlog.testing.capture_logs() as logs:
            provider.embed_documents(["a"])
            provider.embed_documents(["b"])

        assert server.requests  # every one was checked by FakeGemini: header only, never URL
        assert len(logs) == 2
        for entry in logs:
            assert SECRET not in json.dumps(entry, default=str)
            assert "lacks batch permission" in entry["error"]
