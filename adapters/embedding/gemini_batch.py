"""Adapter helper: Gemini's asynchronous batch embedding (`models.asyncBatchEmbedContent`).

Flow, per group of at most 50 000 texts: upload a JSONL file through the File API's resumable
protocol, enqueue an `EmbedContentBatch` over it, poll the long-running operation until its state
is terminal, then read the results (a responses file to download, or inlined responses) and map
them back to the inputs by `key`. Any failure raises `BatchError`; `BatchEmbedder` (batch.py)
owns the retry / disable / inline-fallback policy. A 404 on the upload or create call means this
endpoint offers no batch API: the error says `asyncBatchEmbedContent not available` and switches
batch mode off at once.

What was verified, and where (public docs read through the search tool; shapes only):

* https://ai.google.dev/api/batch-api : `POST {base}/models/{model}:asyncBatchEmbedContent` takes
  `{"batch": EmbedContentBatch}` (`displayName` and `inputConfig` required) and answers an
  `Operation` `{name, metadata, done, error | response}`; `GET {base}/batches/{id}` answers the
  same Operation; `BatchState` is `BATCH_STATE_{UNSPECIFIED,PENDING,RUNNING,SUCCEEDED,FAILED,
  CANCELLED,EXPIRED}`.
* https://ai.google.dev/api/embeddings : `EmbedContentBatch` is `{model, name: "batches/..",
  displayName, inputConfig: {fileName | requests}, output, batchStats, state}`; the output is
  `{responsesFile}` (a JSONL file of `EmbedContentResponse`s, in input order) or
  `{inlinedResponses: {inlinedResponses: [{metadata, response | error}]}}`; an
  `EmbedContentResponse` is `{embedding: {values: [...]}}`.
* https://ai.google.dev/gemini-api/docs/batch-api : input file lines are `{"key", "request"}`;
  the file goes up through `/upload/v1beta/files` (a `start` call answering the session URL in
  `x-goog-upload-url`, then one `upload, finalize` call with the bytes); polling reads
  `metadata.state`, results sit under `response.responsesFile` / `response.inlinedResponses`; a
  responses file is fetched from `/download/v1beta/{file}:download?alt=media`. This guide spells
  states `JOB_STATE_*` (the SDKs' renaming; Google's js/go SDKs map `BATCH_STATE_X` to
  `JOB_STATE_X`), so both spellings are accepted, and results are looked for both in `response`
  and in `metadata.output` (where the SDKs read them).
* https://developers.googleblog.com/gemini-batch-api-now-supports-embeddings-and-openai-compatibility
  : an embedding request line is `{"key", "request": {"content": {"parts": [{"text"}]}, ...}}`,
  the model being the batch's, not the line's.
* https://ai.google.dev/api/files : the upload answers `{"file": {"name": "files/..", ...}}`.

The API key travels only in the `x-goog-api-key` header (never in a URL), the session URL is only
followed on the API's own host, and every message built from a server answer is redacted.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import httpx

from memlane.adapters.embedding._wire import JSON, RawVectors, as_floats, dumps, error_fields
from memlane.adapters.embedding.batch import BatchError, run_in_groups
from memlane.application.ports.embedding import EmbeddingError
from memlane.domain.config import BatchSettings

DISPLAY_NAME = "memlane-embeddings"
NOT_AVAILABLE = "asyncBatchEmbedContent not available"
_SUCCEEDED = "SUCCEEDED"
_FAILED = frozenset({"FAILED", "CANCELLED", "EXPIRED"})
_BATCH_NAME = re.compile(r"batches/[A-Za-z0-9_-]+")
_FILE_NAME = re.compile(r"files/[A-Za-z0-9_-]+")


class Sender(Protocol):
    """The provider's retrying JSON call (HttpEmbeddingProvider._send)."""

    def __call__(
        self,
        method: str,
        url: str,
        *,
        json: JSON = None,
        passthrough: frozenset[int] = ...,
    ) -> httpx.Response: ...


@dataclass
class GeminiBatchFlow:
    """Upload, create, poll and read one Gemini async embedding batch per group of texts.

    `send` is the provider's retrying call (429 / 5xx retried, other 4xx final); `client` is its
    pooled httpx client, used directly for the two resumable-upload calls, which need raw bytes
    and `X-Goog-Upload-*` headers. `request_body(text)` is one line's `EmbedContentRequest`.
    """

    send: Sender
    client: httpx.Client
    base_url: str
    model: str
    settings: BatchSettings
    request_body: Callable[[str], JSON]
    redact: Callable[[str], str]
    sleep: Callable[[float], None] = time.sleep
    monotonic: Callable[[], float] = time.monotonic

    def run(self, texts: Sequence[str]) -> RawVectors:
        return run_in_groups(texts, self.settings.concurrency, self._run_group)

    # -- one group -----------------------------------------------------------------------------

    def _run_group(self, texts: list[str]) -> RawVectors:
        try:
            file_name = self._upload(texts)
            operation = self._create(file_name)
            operation = self._wait(operation)
            return self._results(operation, len(texts))
        except EmbeddingError as exc:
            raise self._error(f"gemini batch request failed: {exc}") from exc

    def _upload(self, texts: list[str]) -> str:
        lines = [
            dumps({"key": str(index), "request": self.request_body(text)})
            for index, text in enumerate(texts)
        ]
        payload = ("\n".join(lines) + "\n").encode("utf-8")
        root, version = _split_base(self.base_url)
        start = self._raw(
            "POST",
            f"{root}/upload/{version}/files",
            headers={
                "X-Goog-Upload-Protocol": "resumable",
                "X-Goog-Upload-Command": "start",
                "X-Goog-Upload-Header-Content-Length": str(len(payload)),
                "X-Goog-Upload-Header-Content-Type": "application/jsonl",
            },
            json_body={"file": {"displayName": DISPLAY_NAME}},
        )
        session = start.headers.get("x-goog-upload-url")
        if not session:
            raise self._error("gemini file upload answered no x-goog-upload-url")
        session_url = httpx.URL(root).join(session)
        if (session_url.scheme, session_url.host, session_url.port) != _origin(root):
            # The session URL comes from the server; never send our key to another host.
            raise self._error("gemini file upload pointed to another host; refused")
        done = self._raw(
            "POST",
            str(session_url),
            headers={"X-Goog-Upload-Command": "upload, finalize", "X-Goog-Upload-Offset": "0"},
            content=payload,
        )
        file = self._json(done).get("file")
        name = file.get("name") if isinstance(file, dict) else None
        if not isinstance(name, str) or not _FILE_NAME.fullmatch(name):
            raise self._error("gemini file upload answered no usable file name")
        return name

    def _create(self, file_name: str) -> JSON:
        response = self.send(
            "POST",
            f"{self.base_url}/models/{self.model}:asyncBatchEmbedContent",
            json={"batch": {"displayName": DISPLAY_NAME, "inputConfig": {"fileName": file_name}}},
            passthrough=frozenset({404}),
        )
        if response.status_code == 404:
            raise self._unavailable(response)
        return self._json(response)

    def _wait(self, operation: JSON) -> JSON:
        name = _batch_name(operation)
        if name is None:
            raise self._error("gemini batch create answered no batch name")
        started = self.monotonic()
        slept = 0.0
        limit = self.settings.timeout_minutes * 60.0
        interval = max(self.settings.poll_interval_ms, 1) / 1000.0
        while True:
            state = _state(operation)
            error = operation.get("error")
            if state == _SUCCEEDED or (operation.get("done") is True and not error and not state):
                return operation
            if error or state in _FAILED or operation.get("done") is True:
                raise self._error(f"gemini batch {name} {state or 'ended'}: {_detail(error)}")
            if not self.settings.wait:
                raise self._error(f"gemini batch {name} is {state or 'pending'} and wait is off")
            # Either clock may run ahead: real time in production, injected sleeps in tests.
            if max(slept, self.monotonic() - started) + interval > limit:
                raise self._error(f"gemini batch {name} timed out while {state}", timed_out=True)
            self.sleep(interval)
            slept += interval
            operation = self._json(self.send("GET", f"{self.base_url}/{name}"))

    def _results(self, operation: JSON, count: int) -> RawVectors:
        output = _output_of(operation)
        responses_file = output.get("responsesFile")
        if isinstance(responses_file, str) and _FILE_NAME.fullmatch(responses_file):
            root, version = _split_base(self.base_url)
            url = f"{root}/download/{version}/{responses_file}:download?alt=media"
            return self._map(_jsonl(self.send("GET", url).text), count)
        inlined = output.get("inlinedResponses")
        if isinstance(inlined, dict):
            inlined = inlined.get("inlinedResponses")
        if isinstance(inlined, list):
            return self._map(inlined, count)
        raise self._error("gemini batch succeeded without a responses file or inlined responses")

    def _map(self, items: Sequence[JSON], count: int) -> RawVectors:
        """Map results to inputs by key; without any key, by position (the documented order)."""
        keyed = any(_key_of(item) is not None for item in items)
        if not keyed and len(items) != count:
            raise self._error(f"gemini batch answered {len(items)} results for {count} inputs")
        found: dict[int, list[float]] = {}
        for position, item in enumerate(items):
            key = _key_of(item) if keyed else str(position)
            if key is None or not key.isdigit() or int(key) >= count:
                continue
            found[int(key)] = self._vector(key, item)
        missing = count - len(found)
        if missing:
            raise self._error(f"gemini batch output misses {missing} of {count} requests")
        return [found[i] for i in range(count)]

    def _vector(self, key: str, item: JSON) -> list[float]:
        response = item.get("response") if isinstance(item, dict) else None
        error = item.get("error") if isinstance(item, dict) else None
        if not error and isinstance(response, dict):
            error = response.get("error")
        if error:
            raise self._error(f"{key}: {_detail(error)}")
        holder = response if isinstance(response, dict) else item
        embedding = holder.get("embedding") if isinstance(holder, dict) else None
        values = embedding.get("values") if isinstance(embedding, dict) else None
        if not values:
            raise self._error(f"{key}: empty embedding")
        try:
            return as_floats(values)
        except EmbeddingError as exc:
            raise self._error(f"{key}: {exc}") from exc

    # -- plumbing ------------------------------------------------------------------------------

    def _raw(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str],
        json_body: JSON = None,
        content: bytes | None = None,
    ) -> httpx.Response:
        """One upload call, not retried: a failed upload just falls back to inline embedding."""
        try:
            response = self.client.request(
                method, url, headers=headers, json=json_body, content=content
            )
        except httpx.HTTPError as exc:
            raise self._error(f"gemini file upload failed: {type(exc).__name__}") from exc
        if response.status_code == 404:
            raise self._unavailable(response)
        if not response.is_success:
            code, message = error_fields(response)
            raise self._error(f"gemini file upload failed: {response.status_code} {code} {message}")
        return response

    def _unavailable(self, response: httpx.Response) -> BatchError:
        _, message = error_fields(response)
        return self._error(f"gemini: {NOT_AVAILABLE} (404 {message})", disables_batch=True)

    def _json(self, response: httpx.Response) -> JSON:
        try:
            value = response.json()
        except ValueError as exc:
            raise self._error("gemini batch API answered with malformed JSON") from exc
        if not isinstance(value, dict):
            raise self._error("gemini batch API answered with a non-object")
        return value

    def _error(
        self, message: str, *, timed_out: bool = False, disables_batch: bool = False
    ) -> BatchError:
        return BatchError(
            self.redact(message)[:500], timed_out=timed_out, disables_batch=disables_batch
        )


def _split_base(base_url: str) -> tuple[str, str]:
    """Split `https://host/v1beta` into (`https://host`, `v1beta`) for the upload/download paths."""
    url = httpx.URL(base_url)
    path = url.path.rstrip("/")
    head, _, version = path.rpartition("/")
    root = str(url.copy_with(path=head or "/", query=None)).rstrip("/")
    return root, version or "v1beta"


def _origin(root: str) -> tuple[str, str, int | None]:
    url = httpx.URL(root)
    return url.scheme, url.host, url.port


def _state(operation: JSON) -> str:
    """The batch state without its `BATCH_STATE_` / `JOB_STATE_` prefix ('' when absent)."""
    metadata = operation.get("metadata") if isinstance(operation, dict) else None
    state = metadata.get("state") if isinstance(metadata, dict) else None
    if not isinstance(state, str):
        return ""
    return state.removeprefix("BATCH_STATE_").removeprefix("JOB_STATE_")


def _batch_name(operation: JSON) -> str | None:
    metadata = operation.get("metadata")
    for name in (
        operation.get("name"),
        metadata.get("name") if isinstance(metadata, dict) else None,
    ):
        if isinstance(name, str) and _BATCH_NAME.fullmatch(name):
            return name
    return None


def _output_of(operation: JSON) -> dict[str, JSON]:
    """The batch output: the operation's `response` (the guide) or `metadata.output` (the SDKs)."""
    candidates: list[JSON] = []
    response = operation.get("response")
    if isinstance(response, dict):
        candidates += [response, response.get("output")]
    metadata = operation.get("metadata")
    if isinstance(metadata, dict):
        candidates.append(metadata.get("output"))
    for candidate in candidates:
        if isinstance(candidate, dict) and (
            "responsesFile" in candidate or "inlinedResponses" in candidate
        ):
            return candidate
    return {}


def _key_of(item: JSON) -> str | None:
    if not isinstance(item, dict):
        return None
    key = item.get("key")
    if key is None and isinstance(item.get("metadata"), dict):
        key = item["metadata"].get("key")
    return key if isinstance(key, str) else None


def _jsonl(content: str) -> list[JSON]:
    items: list[JSON] = []
    for raw_line in content.splitlines():
        if not raw_line.strip():
            continue
        try:
            items.append(json.loads(raw_line))
        except ValueError as exc:
            raise BatchError("gemini batch output holds a malformed line") from exc
    return items


def _detail(error: JSON) -> str:
    """A `google.rpc.Status` (`{code, message, details}`) or anything else, as short text."""
    if isinstance(error, dict):
        return str(error.get("message") or error.get("status") or error)[:300]
    return str(error)[:300] if error else "no detail"
