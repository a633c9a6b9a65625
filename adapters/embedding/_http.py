"""Adapter base: what every HTTP embedding provider shares (batching, concurrency, retries, errors).

Subclasses implement one template method, `_embed_batch`, that turns one request-sized batch of
texts into raw vectors through `_post_json`. This base then:

* packs inputs into requests by a byte budget (UTF-8 bytes bound the token count) and a
  per-provider item cap, and runs them with at most `max_concurrency` requests in flight;
* retries 429, 408, 5xx, timeouts and connection resets with exponential backoff and jitter,
  honouring `Retry-After` / `retry-after-ms` (a pause over a minute gives up at once: the
  provider is unavailable for now); which failures are retried is `_retry_policy`'s call;
* gives queries a real deadline: each attempt's httpx timeout is the time left, so a hung request
  is closed, not just abandoned;
* validates every response (JSON, count, dimensions, numbers) and sanitises and L2-normalises
  every vector, rejecting one with no finite non-zero value (it would match nothing);
* names what to fix when the key is refused (401, 403, Google's `API_KEY_INVALID`), never
  the key itself.

What a provider is built from (`HttpOptions`, the `BatchRunner` shape) is in _http_options.py.

Errors raised: the port's EmbeddingError tree only (see application.ports.embedding).
"""

from __future__ import annotations

import math
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from types import MappingProxyType
from typing import ClassVar

import httpx
import structlog

from memlane.adapters.embedding._http_options import BatchRunner, HttpOptions
from memlane.adapters.embedding._retry_policy import (
    MAX_RETRY_AFTER,
    Retryable,
    classify,
    give_up,
    retry_delay,
)
from memlane.adapters.embedding._wire import JSON, RawVectors, pack_batches
from memlane.adapters.embedding.keys import provider_key
from memlane.application.ports.embedding import (
    EmbeddingRejected,
    EmbeddingTimeout,
    ProviderNotConfigured,
    Vector,
)
from memlane.domain.config import BatchSettings
from memlane.domain.embedding import sanitize_and_normalize
from memlane.domain.providers import provider_info
from memlane.domain.url_passwords import mask_url_passwords

log = structlog.get_logger()


_PROBE_TEXT = "dimension probe"


class HttpEmbeddingProvider(ABC):
    """Template for the HTTP providers: subclasses say how to build and read one request.

    Capabilities are class attributes, read by the container and the tests: `provider_id`
    (its row in domain/providers.py supplies `default_model`, `default_base_url` and
    `key_env`), `requires_api_key`, `supports_batch`, `supports_output_dimensions`.
    """

    provider_id: ClassVar[str]
    default_model: ClassVar[str]
    default_base_url: ClassVar[str]
    key_env: ClassVar[tuple[str, ...]]
    requires_api_key: ClassVar[bool] = True
    supports_batch: ClassVar[bool] = False
    supports_output_dimensions: ClassVar[bool] = False
    # Prefixes users write before a model name ("openai/..."), removed in this order.
    model_prefixes: ClassVar[tuple[str, ...]] = ()
    known_dimensions: ClassVar[Mapping[str, int]] = MappingProxyType({})
    input_token_limits: ClassVar[Mapping[str, int]] = MappingProxyType({})
    default_input_tokens: ClassVar[int] = 8192
    max_batch_items: ClassVar[int] = 256
    max_batch_bytes: ClassVar[int] = 8000

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        info = provider_info(cls.provider_id)
        cls.default_model = info.default_model
        cls.default_base_url = info.default_base_url or ""
        cls.key_env = info.key_env

    def __init__(self, options: HttpOptions) -> None:
        api_key = options.api_key
        if self.requires_api_key and not api_key and not options.key_optional:
            raise ProviderNotConfigured(
                f"No API key found for provider {self.provider_id} "
                f"(set remote.apiKey or {self.key_env[0]})"
            )
        model = options.model.strip()
        for prefix in self.model_prefixes:
            model = model.removeprefix(prefix)
        model = model or self.default_model
        self._check_options(model, options.dimensions)
        self._model = model
        self._requested_dimensions = options.dimensions
        self._base_url = self._normalise_base_url(options.base_url or self.default_base_url)
        self._base_url = self._base_url.rstrip("/")
        self._secret = api_key
        self._timeout = options.timeout
        self._query_timeout = options.query_timeout
        self._max_retries = max(0, options.max_retries)
        self._sleep = options.sleep
        self._jitter = options.jitter
        self._dimensions = options.dimensions or self._known_dimensions(model)
        self._max_input_tokens = self.input_token_limits.get(model, self.default_input_tokens)
        self._workers = max(1, options.max_concurrency)
        self._in_flight = threading.BoundedSemaphore(self._workers)
        self._dimensions_lock = threading.Lock()
        self._key = provider_key(
            provider=self.provider_id,
            model=model,
            base_url=self._base_url,
            output_dimensionality=options.dimensions,
            headers=options.headers,
            input_types=(options.query_input_type, options.document_input_type),
        )
        self._input_types = (options.query_input_type, options.document_input_type)
        # No default Content-Type: httpx sets it per body (JSON, or multipart for batch uploads).
        merged = {**self._auth_headers(api_key), **options.headers}
        self._client = httpx.Client(
            transport=options.transport,
            headers=merged,
            timeout=options.timeout,
            follow_redirects=False,
        )
        batch = options.batch
        self._batch: BatchRunner | None = None
        if self.supports_batch and batch is not None and batch.enabled:
            self._batch = self._batch_runner(batch)

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

    @property
    def batch_active(self) -> bool:
        """True while documents go through the batch API (off after repeated failures)."""
        return self._batch is not None and self._batch.active

    def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        if not texts:
            return []
        if self._batch is not None:
            raw = self._batch.try_embed(texts)
            if raw is not None:
                return self._finish_vectors(raw, len(texts))
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

    def _check_options(self, model: str, dimensions: int | None) -> None:
        """Raise ProviderNotConfigured for a combination the provider cannot serve."""
        del model, dimensions  # every combination is served unless a provider says otherwise

    def _normalise_base_url(self, base_url: str) -> str:
        return base_url

    def _auth_headers(self, api_key: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {api_key}"} if api_key else {}

    def _known_dimensions(self, model: str) -> int | None:
        return self.known_dimensions.get(model)

    def _batch_runner(self, settings: BatchSettings) -> BatchRunner:
        """Build the batch runner; only called when `supports_batch` is set."""
        raise NotImplementedError(self.provider_id)

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
                failure = Retryable(f"timed out after {timeout:.1f}s", None, None, timed_out=True)
                cause: BaseException = exc
            except httpx.UnsupportedProtocol as exc:
                raise EmbeddingRejected(
                    f"{self.provider_id}: unsupported URL {mask_url_passwords(url)}"
                ) from exc
            except httpx.TransportError as exc:
                where = mask_url_passwords(self._base_url)
                failure = Retryable(
                    f"connection failed: {type(exc).__name__} ({where})", None, None, False
                )
                cause = exc
            else:
                if response.is_success or response.status_code in passthrough:
                    return response
                failure = classify(
                    response,
                    provider_id=self.provider_id,
                    key_hint=self._key_hint(),
                    redact=self._redact,
                )
                cause = httpx.HTTPStatusError(
                    failure.message, request=response.request, response=response
                )
            if failure.retry_after is not None and failure.retry_after > MAX_RETRY_AFTER:
                # Waiting that long inside one call helps nobody: unavailable for now (the
                # runtime's cool-down skips the provider meanwhile).
                asked = f"{failure.message} (asks to retry in {failure.retry_after:.0f} s)"
                failure = replace(failure, message=asked)
                raise give_up(self.provider_id, failure, attempt + 1) from cause
            delay = retry_delay(attempt, failure, self._jitter)
            if attempt >= self._max_retries or not self._fits(deadline, delay):
                raise give_up(self.provider_id, failure, attempt + 1) from cause
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
        vectors = [sanitize_and_normalize(vector) for vector in raw]
        for position, vector in enumerate(vectors):
            # A unit vector has norm 1; one of zeros (or of NaN only) stays ~0 and would be
            # stored as if embedded while matching nothing.
            if math.fsum(x * x for x in vector) < 0.5:
                raise EmbeddingRejected(
                    f"{self.provider_id}: the embedding of input {position + 1} of "
                    f"{len(vectors)} holds no finite non-zero value (model {self._model})"
                )
        return vectors

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

    def _key_hint(self) -> str:
        """What to fix when the server refuses the credentials (never the key itself)."""
        where = f"remote.apiKey or {self.key_env[0]}" if self.key_env else "remote.apiKey"
        if self._secret:
            return f"the API key was refused or lacks access (check {where})"
        return f"the server wants an API key (set {where})"

    def _redact(self, text: str) -> str:
        if self._secret and self._secret in text:
            return text.replace(self._secret, "***")
        return text
