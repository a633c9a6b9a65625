"""Adapter base: what every HTTP embedding provider shares (batching, concurrency, retries, errors).

Subclasses implement one template method, `_embed_batch`, that turns one request-sized batch of
texts into raw vectors through `_post_json`. This base then:

* packs inputs into requests by a byte budget (UTF-8 bytes bound the token count, §7) and a
  per-provider item cap, and runs them with at most `max_concurrency` requests in flight;
* retries 429, 408, 5xx, timeouts and connection resets with exponential backoff and jitter,
  honouring `Retry-After` / `retry-after-ms` (§10.1), and classifies by HTTP status code, never by
  a regex over the message, so "1536" in a message is not a 5xx and `insufficient_quota` (429) is
  final (§31.12);
* gives queries a real deadline: each attempt's httpx timeout is the time left, so a hung request
  is closed, not just abandoned (§31.12);
* validates every response (JSON, count, dimensions, numbers) and sanitises and L2-normalises
  every vector.

Errors raised: the port's EmbeddingError tree only (see application.ports.embedding).
"""

from __future__ import annotations

import email.utils
import json
import random
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, ClassVar

import httpx
import structlog

from memlane.adapters.embedding.keys import provider_key
from memlane.application.ports.embedding import (
    EmbeddingError,
    EmbeddingRejected,
    EmbeddingTimeout,
    EmbeddingUnavailable,
    Vector,
)
from memlane.domain.embedding import sanitize_and_normalize

log = structlog.get_logger()

JSON = Any  # parsed JSON; every access is checked before use
RawVectors = list[list[float]]

_BASE_DELAY = 0.5
_MAX_DELAY = 8.0
_JITTER = 0.2
# A server asking for a longer pause than this is treated as unavailable for now.
_MAX_RETRY_AFTER = 60.0
_FINAL_429_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached"})
_PROBE_TEXT = "dimension probe"


@dataclass(frozen=True, slots=True)
class _Retryable:
    """A failed attempt that may succeed later (status None means a transport failure)."""

    message: str
    status: int | None
    retry_after: float | None
    timed_out: bool


def error_fields(response: httpx.Response) -> tuple[str, str]:
    """Extract (code or type, message) from any of the providers' error bodies, best effort.

    Shapes: OpenAI / Mistral `{"error": {"message", "type", "code"}}`, Gemini `{"error": {"code",
    "message", "status"}}`, Mistral `{"object": "error", "message", "type"}`, Voyage
    `{"detail": ...}`, Ollama `{"error": "text"}`.
    """
    try:
        body = response.json()
    except ValueError:
        return "", response.text[:300]
    if not isinstance(body, dict):
        return "", str(body)[:300]
    error = body.get("error", body)
    if isinstance(error, str):
        return "", error[:300]
    if not isinstance(error, dict):
        return "", str(error)[:300]
    code = error.get("code")
    kind = code if isinstance(code, str) and code else error.get("type") or error.get("status")
    message = error.get("message", error.get("detail", ""))
    return (str(kind) if kind else ""), str(message)[:300]


def _retry_after(response: httpx.Response) -> float | None:
    """Seconds the server asks us to wait, from retry-after-ms or Retry-After (seconds or date)."""
    millis = response.headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    # An HTTP date: measure it against the response's own Date header (no local clock needed).
    try:
        target = email.utils.parsedate_to_datetime(value)
        now = email.utils.parsedate_to_datetime(response.headers.get("date", ""))
    except (TypeError, ValueError):
        return None
    return max(0.0, (target - now).total_seconds())


def vectors_from_data(payload: JSON) -> RawVectors:
    """Read the OpenAI-style `{"data": [{"index", "embedding"}]}` shape, ordered by index."""
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        raise EmbeddingRejected("response has no 'data' list")
    items: list[tuple[int, object]] = []
    for position, item in enumerate(data):
        if not isinstance(item, dict):
            raise EmbeddingRejected("response 'data' holds a non-object")
        index = item.get("index", position)
        if not isinstance(index, int):
            raise EmbeddingRejected("response item has a non-integer index")
        items.append((index, item.get("embedding")))
    items.sort(key=lambda pair: pair[0])
    return [as_floats(embedding) for _, embedding in items]


def as_floats(value: object) -> list[float]:
    """Check that a response value is a list of numbers and return it as floats."""
    if not isinstance(value, list):
        raise EmbeddingRejected("embedding is not a list of numbers")
    out: list[float] = []
    for x in value:
        if isinstance(x, bool) or not isinstance(x, int | float):
            raise EmbeddingRejected("embedding holds a non-number")
        out.append(float(x))
    return out


def pack_batches(
    texts: Sequence[str], *, max_items: int, max_bytes: int
) -> list[tuple[int, list[str]]]:
    """Split texts into (start index, texts) requests within an item cap and a UTF-8 byte budget.

    An input larger than the budget travels alone (the caller splits over-long inputs, §7).
    """
    batches: list[tuple[int, list[str]]] = []
    current: list[str] = []
    start = 0
    size = 0
    for index, text in enumerate(texts):
        length = len(text.encode("utf-8"))
        if current and (len(current) >= max_items or size + length > max_bytes):
            batches.append((start, current))
            current, start, size = [], index, 0
        current.append(text)
        size += length
    if current:
        batches.append((start, current))
    return batches


class HttpEmbeddingProvider(ABC):
    """Template for the HTTP providers: subclasses say how to build and read one request."""

    provider_id: ClassVar[str]
    max_batch_items: ClassVar[int] = 256
    max_batch_bytes: ClassVar[int] = 8000

    def __init__(
        self,
        *,
        model: str,
        base_url: str,
        auth_headers: Mapping[str, str],
        headers: Mapping[str, str],
        secret: str | None,
        timeout: float,
        query_timeout: float,
        max_concurrency: int,
        max_retries: int,
        transport: httpx.BaseTransport | None,
        sleep: Callable[[float], None],
        dimensions: int | None,
        output_dimensionality: int | None,
        max_input_tokens: int,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self._model = model
        self._base_url = base_url.rstrip("/")
        self._secret = secret
        self._timeout = timeout
        self._query_timeout = query_timeout
        self._max_retries = max(0, max_retries)
        self._sleep = sleep
        self._jitter = jitter
        self._dimensions = dimensions
        self._max_input_tokens = max_input_tokens
        self._workers = max(1, max_concurrency)
        self._in_flight = threading.BoundedSemaphore(self._workers)
        self._dimensions_lock = threading.Lock()
        self._key = provider_key(
            provider=self.provider_id,
            model=model,
            base_url=self._base_url,
            output_dimensionality=output_dimensionality,
            headers=headers,
        )
        # No default Content-Type: httpx sets it per body (JSON, or multipart for batch uploads).
        merged = {**auth_headers, **headers}
        self._client = httpx.Client(
            transport=transport, headers=merged, timeout=timeout, follow_redirects=False
        )

    # -- the port ------------------------------------------------------------------------------

    @property
    def id(self) -> str:
        return self.provider_id

    @property
    def model(self) -> str:
        return self._model

    @property
    def dimensions(self) -> int:
        """Known from the model table or configuration; otherwise probed once with one text."""
        if self._dimensions is None:
            with self._dimensions_lock:
                if self._dimensions is None:
                    deadline = time.monotonic() + self._query_timeout
                    raw = self._embed_batch([_PROBE_TEXT], query=False, deadline=deadline)
                    self._finish_vectors(raw, 1)
        assert self._dimensions is not None  # set by _finish_vectors
        return self._dimensions

    @property
    def max_input_tokens(self) -> int:
        return self._max_input_tokens

    @property
    def key(self) -> str:
        return self._key

    def embed_query(self, text: str) -> Vector:
        deadline = time.monotonic() + self._query_timeout
        raw = self._embed_batch([text], query=True, deadline=deadline)
        return self._finish_vectors(raw, 1)[0]

    def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        if not texts:
            return []
        batches = pack_batches(
            texts, max_items=self.max_batch_items, max_bytes=self.max_batch_bytes
        )

        def run(batch: tuple[int, list[str]]) -> list[Vector]:
            raw = self._embed_batch(batch[1], query=False, deadline=None)
            return self._finish_vectors(raw, len(batch[1]))

        if len(batches) == 1 or self._workers == 1:
            parts = [run(batch) for batch in batches]
        else:
            with ThreadPoolExecutor(max_workers=min(self._workers, len(batches))) as pool:
                parts = list(pool.map(run, batches))
        return [vector for part in parts for vector in part]

    def close(self) -> None:
        """Close the pooled HTTP connections."""
        self._client.close()

    # -- for subclasses ------------------------------------------------------------------------

    @abstractmethod
    def _embed_batch(
        self, texts: Sequence[str], *, query: bool, deadline: float | None
    ) -> RawVectors:
        """Send one request-sized batch and return its raw vectors, in input order."""

    def _url(self, path: str) -> str:
        return f"{self._base_url}{path}"

    def _post_json(self, url: str, body: JSON, *, deadline: float | None) -> JSON:
        """POST JSON with retries; return the parsed JSON body of the successful response."""
        response = self._send("POST", url, json=body, deadline=deadline)
        return self._parse_json(response)

    def _parse_json(self, response: httpx.Response) -> JSON:
        try:
            return response.json()
        except ValueError as exc:
            raise EmbeddingRejected(f"{self.provider_id}: response is not valid JSON") from exc

    def _send(
        self,
        method: str,
        url: str,
        *,
        json: JSON = None,
        files: Mapping[str, tuple[str, bytes, str]] | None = None,
        data: Mapping[str, str] | None = None,
        deadline: float | None = None,
        passthrough: frozenset[int] = frozenset(),
    ) -> httpx.Response:
        """Send one request with the retry policy; return a 2xx response or raise EmbeddingError.

        Statuses in `passthrough` are returned as they are, for callers that treat them specially.
        """
        attempt = 0
        while True:
            timeout = self._attempt_timeout(deadline)
            try:
                with self._in_flight:
                    response = self._client.request(
                        method, url, json=json, files=files, data=data, timeout=timeout
                    )
            except httpx.TimeoutException as exc:
                failure = _Retryable(f"timed out after {timeout:.1f}s", None, None, timed_out=True)
                cause: BaseException = exc
            except httpx.UnsupportedProtocol as exc:
                raise EmbeddingRejected(f"{self.provider_id}: unsupported URL {url}") from exc
            except httpx.TransportError as exc:
                failure = _Retryable(f"connection failed: {type(exc).__name__}", None, None, False)
                cause = exc
            else:
                if response.is_success or response.status_code in passthrough:
                    return response
                failure = self._classify(response)
                cause = httpx.HTTPStatusError(
                    failure.message, request=response.request, response=response
                )
            delay = self._delay(attempt, failure)
            if attempt >= self._max_retries or not self._fits(deadline, delay):
                raise self._give_up(failure, attempt + 1) from cause
            log.warning(
                "embedding_request_retried",
                provider=self.provider_id,
                status=failure.status,
                attempt=attempt + 1,
                delay_s=round(delay, 3),
            )
            self._sleep(delay)
            attempt += 1

    def _finish_vectors(self, raw: RawVectors, expected: int) -> list[Vector]:
        """Check count and dimensions, then sanitise and normalise every vector."""
        if len(raw) != expected:
            raise EmbeddingRejected(
                f"{self.provider_id}: {len(raw)} vectors returned for {expected} inputs"
            )
        if self._dimensions is None and raw and raw[0]:
            self._dimensions = len(raw[0])
        for vector in raw:
            if not vector:
                raise EmbeddingRejected(f"{self.provider_id}: empty embedding returned")
            if len(vector) != self._dimensions:
                raise EmbeddingRejected(
                    f"{self.provider_id}: vector of {len(vector)} dimensions, "
                    f"expected {self._dimensions} for model {self._model}"
                )
        return [sanitize_and_normalize(vector) for vector in raw]

    # -- internals -----------------------------------------------------------------------------

    def _attempt_timeout(self, deadline: float | None) -> float:
        if deadline is None:
            return self._timeout
        left = deadline - time.monotonic()
        if left <= 0:
            raise EmbeddingTimeout(f"{self.provider_id}: query deadline passed")
        return min(self._timeout, left)

    def _fits(self, deadline: float | None, delay: float) -> bool:
        return deadline is None or time.monotonic() + delay < deadline

    def _classify(self, response: httpx.Response) -> _Retryable:
        status = response.status_code
        code, message = error_fields(response)
        text = f"{status} {code} {self._redact(message)}".strip()
        if status == 429 and code not in _FINAL_429_CODES:
            return _Retryable(text, status, _retry_after(response), timed_out=False)
        if status in (408, 409) or 500 <= status <= 599:
            return _Retryable(text, status, _retry_after(response), timed_out=False)
        raise EmbeddingRejected(f"{self.provider_id} embeddings failed: {text}")

    def _delay(self, attempt: int, failure: _Retryable) -> float:
        if failure.retry_after is not None:
            return min(failure.retry_after, _MAX_RETRY_AFTER)
        backoff = min(_MAX_DELAY, _BASE_DELAY * 2.0**attempt)
        return backoff * (1 + self._jitter() * _JITTER)

    def _give_up(self, failure: _Retryable, attempts: int) -> EmbeddingError:
        message = (
            f"{self.provider_id} embeddings failed after {attempts} attempt(s): {failure.message}"
        )
        if failure.timed_out:
            return EmbeddingTimeout(message)
        return EmbeddingUnavailable(message)

    def _redact(self, text: str) -> str:
        if self._secret and self._secret in text:
            return text.replace(self._secret, "***")
        return text


def dumps(value: JSON) -> str:
    """Compact JSON, as sent in JSONL batch files."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
