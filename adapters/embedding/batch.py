"""Adapter helper: OpenAI and Voyage batch APIs with failure counting and inline fallback.

Flow (OpenAI-style file batches, which Voyage mirrors): upload a JSONL file of requests
(`purpose=batch`), create a batch over it, poll it every `poll_interval_ms` until `completed`,
download the output file and map each line back by `custom_id`. A terminal state (`failed`,
`expired`, `cancelled`), `wait=false` with an unfinished batch, `timeout_minutes` passing, an
error line or a missing id fails the whole group.

`BatchEmbedder` owns the failure policy: a timeout is retried once at once (two attempts), every
failure adds its attempts to a counter, two failed attempts switch batch mode off for the life of
the provider, and a success resets the counter; a failure marked `disables_batch` (the provider has
no batch API) switches it off at once. The caller falls back to inline embedding for the texts of a
failed batch (`try_embed` returns None).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol

import httpx
import structlog

from memlane.adapters.embedding._wire import JSON, RawVectors, as_floats, dumps, vectors_from_data
from memlane.application.ports.embedding import EmbeddingError
from memlane.domain.config import BatchSettings

log = structlog.get_logger()

MAX_REQUESTS_PER_FILE = 50_000
_FAILED_STATES = frozenset({"failed", "expired", "cancelled", "canceled", "cancelling"})
_DISABLE_AFTER = 2


class BatchError(Exception):
    """One batch group failed; the texts are embedded inline instead."""

    def __init__(
        self, message: str, *, timed_out: bool = False, disables_batch: bool = False
    ) -> None:
        super().__init__(message)
        self.timed_out = timed_out
        # The provider has no batch API at all (e.g. Gemini's 404): stop trying at once.
        self.disables_batch = disables_batch


class Sender(Protocol):
    """The provider's retrying HTTP call (HttpEmbeddingProvider._send)."""

    def __call__(
        self,
        method: str,
        url: str,
        *,
        json: JSON = None,
        files: Mapping[str, tuple[str, bytes, str]] | None = None,
        data: Mapping[str, str] | None = None,
        deadline: float | None = None,
    ) -> httpx.Response: ...


def run_in_groups(
    texts: Sequence[str], concurrency: int, run_group: Callable[[list[str]], RawVectors]
) -> RawVectors:
    """Run `run_group` over groups of at most MAX_REQUESTS_PER_FILE texts, `concurrency` at once.

    The APIs cap one input file at that many requests; vectors come back in input order.
    """
    groups = [
        list(texts[i : i + MAX_REQUESTS_PER_FILE])
        for i in range(0, len(texts), MAX_REQUESTS_PER_FILE)
    ]
    if len(groups) == 1:
        return run_group(groups[0])
    workers = max(1, min(concurrency, len(groups)))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        parts = list(pool.map(run_group, groups))
    return [vector for part in parts for vector in part]


class BatchFlow(Protocol):
    """Runs one provider's batch API over texts and returns raw vectors in input order."""

    def run(self, texts: Sequence[str]) -> RawVectors: ...


@dataclass
class FileBatchFlow:
    """OpenAI-style batch: /files upload, /batches create and poll, output file download.

    `line_body(text)` is the JSON body of one request line; `create_body` holds the fields of the
    create call beyond `input_file_id` (endpoint, completion window, metadata or request params).
    """

    send: Sender
    base_url: str
    settings: BatchSettings
    line_body: Callable[[str], JSON]
    create_body: Mapping[str, JSON]
    line_url: str | None = "/v1/embeddings"
    sleep: Callable[[float], None] = time.sleep
    monotonic: Callable[[], float] = time.monotonic

    def run(self, texts: Sequence[str]) -> RawVectors:
        return run_in_groups(texts, self.settings.concurrency, self._run_group)

    def _run_group(self, texts: list[str]) -> RawVectors:
        try:
            file_id = self._upload(texts)
            batch = self._json(
                self.send(
                    "POST",
                    f"{self.base_url}/batches",
                    json={"input_file_id": file_id, **self.create_body},
                )
            )
            batch = self._wait(batch)
            output_id = _str_field(batch, "output_file_id")
            content = self.send("GET", f"{self.base_url}/files/{output_id}/content").text
        except EmbeddingError as exc:
            raise BatchError(f"batch request failed: {exc}") from exc
        return _map_output(content, len(texts))

    def _upload(self, texts: list[str]) -> str:
        lines = []
        for index, text in enumerate(texts):
            line: dict[str, JSON] = {"custom_id": str(index), "body": self.line_body(text)}
            if self.line_url is not None:
                line["method"] = "POST"
                line["url"] = self.line_url
            lines.append(dumps(line))
        payload = ("\n".join(lines) + "\n").encode("utf-8")
        response = self.send(
            "POST",
            f"{self.base_url}/files",
            files={"file": ("memlane-embeddings.jsonl", payload, "application/jsonl")},
            data={"purpose": "batch"},
        )
        return _str_field(self._json(response), "id")

    def _wait(self, batch: JSON) -> JSON:
        started = self.monotonic()
        slept = 0.0
        limit = self.settings.timeout_minutes * 60.0
        interval = max(self.settings.poll_interval_ms, 1) / 1000.0
        batch_id = _str_field(batch, "id")
        while True:
            status = batch.get("status") if isinstance(batch, dict) else None
            if status == "completed":
                return batch
            if status in _FAILED_STATES:
                raise BatchError(f"batch {batch_id} {status}: {self._error_detail(batch)}")
            if not self.settings.wait:
                raise BatchError(f"batch {batch_id} is {status} and batch.wait is off")
            # Either clock may run ahead: real time in production, injected sleeps in tests.
            if max(slept, self.monotonic() - started) + interval > limit:
                raise BatchError(f"batch {batch_id} timed out while {status}", timed_out=True)
            self.sleep(interval)
            slept += interval
            batch = self._json(self.send("GET", f"{self.base_url}/batches/{batch_id}"))

    def _error_detail(self, batch: JSON) -> str:
        errors = batch.get("errors")
        if isinstance(errors, dict) and isinstance(errors.get("data"), list) and errors["data"]:
            first = errors["data"][0]
            if isinstance(first, dict):
                return str(first.get("message", first))[:300]
        error_file = batch.get("error_file_id")
        if isinstance(error_file, str) and error_file:
            text = self.send("GET", f"{self.base_url}/files/{error_file}/content").text
            return text.strip().splitlines()[0][:300] if text.strip() else "empty error file"
        return "no detail"

    def _json(self, response: httpx.Response) -> JSON:
        try:
            value = response.json()
        except ValueError as exc:
            raise BatchError("batch API answered with malformed JSON") from exc
        if not isinstance(value, dict):
            raise BatchError("batch API answered with a non-object")
        return value


def _str_field(value: JSON, name: str) -> str:
    found = value.get(name) if isinstance(value, dict) else None
    if not isinstance(found, str) or not found:
        raise BatchError(f"batch API response lacks '{name}'")
    return found


def _map_output(content: str, count: int) -> RawVectors:
    """Map output lines back to input order by custom_id; any error or gap fails the group."""
    found: dict[int, list[float]] = {}
    for raw_line in content.splitlines():
        if not raw_line.strip():
            continue
        try:
            line = json.loads(raw_line)
        except ValueError as exc:
            raise BatchError("batch output holds a malformed line") from exc
        custom_id = line.get("custom_id") if isinstance(line, dict) else None
        if not isinstance(custom_id, str) or not custom_id.isdigit():
            continue
        error = line.get("error")
        if error:
            message = error.get("message", error) if isinstance(error, dict) else error
            raise BatchError(f"{custom_id}: {message}")
        response = line.get("response")
        if not isinstance(response, dict):
            raise BatchError(f"{custom_id}: no response")
        status = response.get("status_code", 200)
        body = response.get("body")
        if isinstance(status, int) and status >= 400:
            detail = body.get("error", body) if isinstance(body, dict) else body
            raise BatchError(f"{custom_id}: status {status}: {detail}")
        try:
            vectors = vectors_from_data(body)
        except EmbeddingError as exc:
            raise BatchError(f"{custom_id}: {exc}") from exc
        if len(vectors) != 1 or not vectors[0]:
            raise BatchError(f"{custom_id}: empty embedding")
        found[int(custom_id)] = as_floats(vectors[0])
    missing = [i for i in range(count) if i not in found]
    if missing:
        raise BatchError(f"batch output misses {len(missing)} of {count} requests")
    return [found[i] for i in range(count)]


class BatchEmbedder:
    """Failure policy around a BatchFlow: retry timeouts once, disable after 2 failures."""

    def __init__(self, flow: BatchFlow, *, provider: str) -> None:
        self._flow = flow
        self._provider = provider
        self.failures = 0
        self.active = True

    def try_embed(self, texts: Sequence[str]) -> RawVectors | None:
        """Embed through the batch API, or return None when the caller must embed inline."""
        if not self.active or not texts:
            return None
        attempts = 0
        while True:
            attempts += 1
            try:
                vectors = self._flow.run(texts)
            except BatchError as exc:
                if exc.timed_out and attempts == 1:
                    continue
                self._record_failure(attempts, str(exc), disable=exc.disables_batch)
                return None
            self.failures = 0
            return vectors

    def _record_failure(self, attempts: int, message: str, *, disable: bool = False) -> None:
        self.failures += attempts
        if disable or self.failures >= _DISABLE_AFTER:
            self.active = False
        log.warning(
            "embedding_batch_failed",
            provider=self._provider,
            failures=self.failures,
            batch_disabled=not self.active,
            error=message[:300],
        )
