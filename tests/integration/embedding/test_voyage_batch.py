"""Voyage batch API against the shapes of docs.voyageai.com/docs/batch-inference.

Checked there: input lines `{"custom_id", "body": {"input": [...]}}` (model and parameters live in
the batch's `request_params`), a multipart upload with `purpose=batch`, `POST /v1/batches` with
`endpoint`, `completion_window: "12h"`, `request_params`, `input_file_id` and `metadata`, the
statuses validating → in_progress → finalizing → completed, output lines
`{"batch_id", "custom_id", "response": {"status_code", "body"}, "error"}` in no particular order,
and failed requests written only to the error file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import structlog

from memlane.adapters.embedding._http_options import HttpOptions
from memlane.adapters.embedding.voyage import VoyageEmbeddingProvider
from memlane.domain.config import BatchSettings
from memlane.domain.embedding import sanitize_and_normalize
from tests.integration.embedding._support import SECRET, body_of, raw_vector

pytestmark = pytest.mark.integration

BASE = "https://api.voyageai.com/v1"
SETTINGS = BatchSettings(enabled=True, poll_interval_ms=1000, timeout_minutes=5)


def _upload_parts(request: httpx.Request) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """Split a multipart/form-data upload into its plain fields and its JSONL file lines."""
    boundary = request.headers["content-type"].split("boundary=", 1)[1]
    fields: dict[str, str] = {}
    lines: list[dict[str, Any]] = []
    for part in request.content.decode("utf-8").split(f"--{boundary}")[1:-1]:
        head, _, body = part.strip("\r\n").partition("\r\n\r\n")
        name = head.split('name="', 1)[1].split('"', 1)[0]
        if 'filename="' in head:
            lines = [json.loads(line) for line in body.splitlines() if line.strip()]
        else:
            fields[name] = body
    return fields, lines


@dataclass
class FakeVoyage:
    """Plays Voyage's /files, /batches and /embeddings endpoints with their documented answers."""

    dims: int = 1024
    statuses: list[str] = field(default_factory=lambda: ["in_progress", "finalizing", "completed"])
    failed_keys: frozenset[str] = frozenset()
    batch_errors: dict[str, Any] | None = None
    uploads: list[list[dict[str, Any]]] = field(default_factory=list)
    upload_fields: list[dict[str, str]] = field(default_factory=list)
    creates: list[dict[str, Any]] = field(default_factory=list)
    inline_calls: int = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        assert request.headers["authorization"] == f"Bearer {SECRET}"
        path, method = request.url.path, request.method
        if method == "POST" and path == "/v1/files":
            fields, lines = _upload_parts(request)
            self.upload_fields.append(fields)
            self.uploads.append(lines)
            return httpx.Response(200, json=self._file("file-abc123", "batch"))
        if method == "POST" and path == "/v1/batches":
            self.creates.append(body_of(request))
            return httpx.Response(200, json=self._batch("validating"))
        if method == "GET" and path == "/v1/batches/batch-abc123":
            return httpx.Response(200, json=self._batch(self.statuses.pop(0)))
        if method == "GET" and path == "/v1/files/file-xyz987/content":
            return httpx.Response(200, text=self._jsonl(self._output()))
        if method == "GET" and path == "/v1/files/file-err654/content":
            return httpx.Response(200, text=self._jsonl(self._errors()))
        if method == "POST" and path == "/v1/embeddings":
            self.inline_calls += 1
            assert body_of(request)["input_type"] == "document"
            n = len(body_of(request)["input"])
            data = [
                {"object": "embedding", "embedding": raw_vector(self.dims, 100 + i), "index": i}
                for i in range(n)
            ]
            return httpx.Response(200, json={"object": "list", "data": data, "model": "m"})
        raise AssertionError(f"unexpected {method} {path}")

    def _file(self, file_id: str, purpose: str) -> dict[str, Any]:
        return {
            "object": "file",
            "id": file_id,
            "purpose": purpose,
            "filename": "memlane-embeddings.jsonl",
            "bytes": 372,
            "created_at": "2025-02-11T19:52:02.536100+00:00",
        }

    def _batch(self, status: str) -> dict[str, Any]:
        done = status in ("completed", "cancelled")
        return {
            "id": "batch-abc123",
            "object": "batch",
            "endpoint": "/v1/embeddings",
            "errors": self.batch_errors if status == "failed" else None,
            "input_file_id": "file-abc123",
            "completion_window": "12h",
            "model": "voyage-4-large",
            "status": status,
            "output_file_id": "file-xyz987" if done else None,
            "error_file_id": "file-err654" if done and self.failed_keys else None,
            "request_counts": {"total": 2, "completed": 2 - len(self.failed_keys), "failed": 0},
            "metadata": {"source": "memlane"},
            "created_at": "2025-11-19T02:47:42.031781+00:00",
            "in_progress_at": None,
            "finalizing_at": None,
            "completed_at": None,
            "failed_at": None,
            "expected_completion_at": "2025-11-19T10:47:42.031781+00:00",
            "cancelling_at": None,
            "cancelled_at": None,
        }

    def _output(self) -> list[dict[str, Any]]:
        # One line per successful request, deliberately not in input order.
        return [
            {
                "batch_id": "batch-abc123",
                "custom_id": line["custom_id"],
                "response": {
                    "status_code": 200,
                    "body": {
                        "object": "list",
                        "data": [
                            {
                                "object": "embedding",
                                "index": 0,
                                "embedding": raw_vector(self.dims, int(line["custom_id"])),
                            }
                        ],
                        "model": "voyage-4-large",
                        "usage": {"total_tokens": 33},
                    },
                },
                "error": None,
            }
            for line in reversed(self.uploads[-1])
            if line["custom_id"] not in self.failed_keys
        ]

    def _errors(self) -> list[dict[str, Any]]:
        return [
            {
                "batch_id": "batch-abc123",
                "custom_id": key,
                "response": {"status_code": 500, "message": "Internal Server Error"},
                "error": None,
            }
            for key in sorted(self.failed_keys)
        ]

    @staticmethod
    def _jsonl(lines: list[dict[str, Any]]) -> str:
        return "\n".join(json.dumps(line) for line in lines) + "\n"


def _voyage(server: FakeVoyage, sleeps: list[float], **kwargs: Any) -> VoyageEmbeddingProvider:
    return VoyageEmbeddingProvider(
        HttpOptions(
            api_key=SECRET,
            base_url=BASE,
            transport=httpx.MockTransport(server),
            sleep=sleeps.append,
            batch=SETTINGS,
            **kwargs,
        )
    )


class TestVoyageBatchAgainstTheDocs:
    def test_a_documented_batch_round_trip_maps_unordered_output_by_custom_id(self) -> None:
        server, sleeps = FakeVoyage(), list[float]()
        provider = _voyage(server, sleeps)

        vectors = provider.embed_documents(["alpha", "beta", "gamma"])

        assert vectors == [sanitize_and_normalize(raw_vector(1024, i)) for i in range(3)]
        assert server.upload_fields == [{"purpose": "batch"}]
        assert server.uploads == [
            [
                {"custom_id": str(i), "body": {"input": [t]}}
                for i, t in enumerate(["alpha", "beta", "gamma"])
            ]
        ]
        assert server.creates == [
            {
                "input_file_id": "file-abc123",
                "endpoint": "/v1/embeddings",
                "completion_window": "12h",
                "request_params": {"model": "voyage-4-large", "input_type": "document"},
                "metadata": {"source": "memlane"},
            }
        ]
        assert sleeps == [1.0, 1.0, 1.0]  # validating → in_progress → finalizing → completed
        assert server.inline_calls == 0

    def test_request_params_carry_the_output_dimension(self) -> None:
        server = FakeVoyage(dims=512)
        provider = _voyage(server, [], model="voyage/voyage-3.5", dimensions=512)

        provider.embed_documents(["x"])

        assert server.creates[0]["request_params"] == {
            "model": "voyage-3.5",
            "input_type": "document",
            "output_dimension": 512,
        }

    def test_a_request_written_only_to_the_error_file_fails_the_group(self) -> None:
        server = FakeVoyage(failed_keys=frozenset({"1"}))
        provider = _voyage(server, [])

        vectors = provider.embed_documents(["a", "b"])

        assert vectors == [sanitize_and_normalize(raw_vector(1024, 100 + i)) for i in range(2)]
        assert server.inline_calls == 1
        assert provider.batch_active

    def test_a_failed_validation_reports_the_documented_errors_object(self) -> None:
        server = FakeVoyage(
            statuses=["failed"],
            batch_errors={
                "object": "list",
                "data": [
                    {
                        "code": "invalid_request",
                        "line": 1,
                        "message": "custom_id is missing",
                        "param": None,
                    }
                ],
            },
        )
        provider = _voyage(server, [])

        with structlog.testing.capture_logs() as logs:
            provider.embed_documents(["a"])

        assert server.inline_calls == 1
        assert "custom_id is missing" in logs[0]["error"]

    def test_a_cancelled_batch_is_not_read_as_a_result(self) -> None:
        server = FakeVoyage(statuses=["cancelling", "cancelled"])
        provider = _voyage(server, [])

        provider.embed_documents(["a"])

        assert server.inline_calls == 1
