"""Batch APIs: OpenAI and Voyage file batches, failure counting and inline fallback."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from memlane.adapters.embedding._http_options import HttpOptions
from memlane.adapters.embedding.openai import OpenAIEmbeddingProvider
from memlane.adapters.embedding.voyage import VoyageEmbeddingProvider
from memlane.application.document_embedder import DocumentEmbedder
from memlane.application.ports.embedding import BatchJobs, EmbeddingRejected
from memlane.domain.config import BatchSettings
from memlane.domain.embedding import sanitize_and_normalize
from tests.fakes.index_store import FakeIndexStore
from tests.integration.embedding._support import SECRET, body_of, raw_vector

pytestmark = pytest.mark.integration

BASE = "https://api.example.test/v1"
SETTINGS = BatchSettings(enabled=True, poll_interval_ms=1500, timeout_minutes=5)


def _jsonl_of_upload(request: httpx.Request) -> list[dict[str, Any]]:
    content = request.content.decode("utf-8")
    assert 'name="purpose"' in content
    assert "\r\n\r\nbatch\r\n" in content
    start = content.index("application/jsonl\r\n\r\n") + len("application/jsonl\r\n\r\n")
    payload = content[start:].split("\r\n--", 1)[0]
    return [json.loads(line) for line in payload.splitlines() if line.strip()]


@dataclass
class FakeBatchServer:
    """Plays the OpenAI-style /files and /batches endpoints and the inline /embeddings one."""

    dims: int
    statuses: list[str] = field(default_factory=lambda: ["in_progress", "completed"])
    failed_detail: dict[str, Any] | None = None
    output_lines: list[dict[str, Any]] | None = None
    uploads: list[list[dict[str, Any]]] = field(default_factory=list)
    creates: list[dict[str, Any]] = field(default_factory=list)
    inline_calls: int = 0
    polls: int = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        assert request.headers["authorization"] == f"Bearer {SECRET}"
        path, method = request.url.path, request.method
        if method == "POST" and path == "/v1/files":
            self.uploads.append(_jsonl_of_upload(request))
            return httpx.Response(200, json={"id": "file-in", "object": "file", "purpose": "batch"})
        if method == "POST" and path == "/v1/batches":
            self.creates.append(body_of(request))
            return httpx.Response(200, json=self._batch("validating"))
        if method == "GET" and path == "/v1/batches/batch_1":
            self.polls += 1
            return httpx.Response(200, json=self._batch(self.statuses.pop(0)))
        if method == "GET" and path == "/v1/files/file-out/content":
            return httpx.Response(200, text="\n".join(json.dumps(x) for x in self._output()))
        if method == "POST" and path == "/v1/embeddings":
            self.inline_calls += 1
            n = len(body_of(request)["input"])
            data = [{"index": i, "embedding": raw_vector(self.dims, 100 + i)} for i in range(n)]
            return httpx.Response(200, json={"data": data})
        raise AssertionError(f"unexpected {method} {path}")

    def _batch(self, state: str) -> dict[str, Any]:
        batch: dict[str, Any] = {"id": "batch_1", "object": "batch", "status": state}
        if state == "completed":
            batch["output_file_id"] = "file-out"
        if state == "failed" and self.failed_detail:
            batch["errors"] = {"object": "list", "data": [self.failed_detail]}
        return batch

    def _output(self) -> list[dict[str, Any]]:
        if self.output_lines is not None:
            return self.output_lines
        lines = []
        for line in reversed(self.uploads[-1]):  # the output order is not the input order
            index = int(line["custom_id"])
            lines.append(
                {
                    "id": f"batch_req_{index}",
                    "custom_id": line["custom_id"],
                    "response": {
                        "status_code": 200,
                        "request_id": "r",
                        "body": {"data": [{"index": 0, "embedding": raw_vector(self.dims, index)}]},
                    },
                    "error": None,
                }
            )
        return lines


def _openai(
    server: FakeBatchServer, sleeps: list[float], **settings: Any
) -> OpenAIEmbeddingProvider:
    return OpenAIEmbeddingProvider(
        HttpOptions(
            api_key=SECRET,
            base_url=BASE,
            transport=httpx.MockTransport(server),
            sleep=sleeps.append,
            batch=BatchSettings(**{**_as_dict(SETTINGS), **settings}),
        )
    )


def _as_dict(settings: BatchSettings) -> dict[str, Any]:
    return {name: getattr(settings, name) for name in settings.__slots__}


class TestOpenAIBatch:
    def test_upload_create_poll_download_and_map_by_custom_id(self) -> None:
        server, sleeps = FakeBatchServer(1536), list[float]()
        provider = _openai(server, sleeps)

        vectors = provider.embed_documents(["first", "second", "third"])

        assert vectors == [sanitize_and_normalize(raw_vector(1536, i)) for i in range(3)]
        assert server.uploads[0] == [
            {
                "custom_id": str(i),
                "method": "POST",
                "url": "/v1/embeddings",
                "body": {
                    "model": "text-embedding-3-small",
                    "input": text,
                    "encoding_format": "float",
                },
            }
            for i, text in enumerate(["first", "second", "third"])
        ]
        assert server.creates == [
            {
                "input_file_id": "file-in",
                "endpoint": "/v1/embeddings",
                "completion_window": "24h",
                "metadata": {"source": "memlane"},
            }
        ]
        assert sleeps == [1.5, 1.5]
        assert server.inline_calls == 0

    def test_a_failed_batch_falls_back_inline_and_two_failures_disable_batching(self) -> None:
        server = FakeBatchServer(
            1536,
            statuses=["failed", "failed"],
            failed_detail={"code": "invalid_request", "message": "bad line 1"},
        )
        provider = _openai(server, [])

        first = provider.embed_documents(["a"])
        active_after_one_failure = provider.batch_active
        second = provider.embed_documents(["b"])
        third = provider.embed_documents(["c"])

        assert len(first) == len(second) == len(third) == 1
        assert active_after_one_failure
        assert not provider.batch_active
        assert len(server.uploads) == 2
        assert server.inline_calls == 3

    def test_a_timed_out_batch_is_retried_once_then_counts_twice(self) -> None:
        server = FakeBatchServer(1536, statuses=["in_progress"] * 10)
        provider = _openai(server, [], poll_interval_ms=40_000, timeout_minutes=1)

        vectors = provider.embed_documents(["a", "b"])

        assert len(vectors) == 2
        assert len(server.uploads) == 2
        assert server.inline_calls == 1
        assert not provider.batch_active

    def test_wait_off_with_an_unfinished_batch_falls_back_inline(self) -> None:
        server = FakeBatchServer(1536, statuses=["in_progress"])
        provider = _openai(server, [], wait=False)

        provider.embed_documents(["a"])

        assert server.inline_calls == 1
        assert provider.batch_active

    def test_an_error_line_fails_the_group(self) -> None:
        server = FakeBatchServer(1536)
        server.output_lines = [
            {"custom_id": "0", "response": None, "error": {"code": "x", "message": "boom"}}
        ]
        provider = _openai(server, [])

        provider.embed_documents(["a"])

        assert server.inline_calls == 1

    def test_a_missing_custom_id_fails_the_group(self) -> None:
        server = FakeBatchServer(1536)
        server.output_lines = [
            {
                "custom_id": "0",
                "response": {"status_code": 200, "body": {"data": [{"embedding": [1.0] * 1536}]}},
            }
        ]
        provider = _openai(server, [])

        vectors = provider.embed_documents(["a", "b"])

        assert server.inline_calls == 1
        assert len(vectors) == 2

    def test_batch_vectors_of_the_wrong_size_are_rejected(self) -> None:
        server = FakeBatchServer(12)
        provider = _openai(server, [])

        with pytest.raises(EmbeddingRejected, match="dimensions"):
            provider.embed_documents(["a"])


class TestVoyageBatch:
    def test_request_params_carry_model_and_input_type(self) -> None:
        server = FakeBatchServer(1024)
        provider = VoyageEmbeddingProvider(
            HttpOptions(
                api_key=SECRET,
                base_url=BASE,
                transport=httpx.MockTransport(server),
                sleep=lambda s: None,
                batch=SETTINGS,
            )
        )

        vectors = provider.embed_documents(["x", "y"])

        assert vectors == [sanitize_and_normalize(raw_vector(1024, i)) for i in range(2)]
        assert server.uploads[0] == [
            {"custom_id": "0", "body": {"input": ["x"]}},
            {"custom_id": "1", "body": {"input": ["y"]}},
        ]
        assert server.creates[0]["request_params"] == {
            "model": "voyage-4-large",
            "input_type": "document",
        }
        assert server.creates[0]["endpoint"] == "/v1/embeddings"


class TestOneJobForManyDocuments:
    def test_the_document_embedder_sends_a_batch_api_many_texts_as_one_job(self) -> None:
        server, sleeps = FakeBatchServer(1536), list[float]()
        provider = _openai(server, sleeps)
        texts = [f"note {i} about the harbour crane" for i in range(150)]

        vectors = DocumentEmbedder(provider, FakeIndexStore()).embed_texts(texts)

        batch_jobs: BatchJobs = provider  # the port protocol the embedder checks for
        assert batch_jobs.batch_active
        assert len(vectors) == 150
        # One job (upload, create, polls) for all of them, not one per 64 texts.
        assert [len(upload) for upload in server.uploads] == [150]
        assert server.inline_calls == 0
