"""Adapter: EmbeddingProvider over the Google Gemini (Generative Language) embeddings API.

Queries: `POST {base}/models/{model}:embedContent` with `{model: "models/..", content: {parts:
[{text}]}, taskType: "RETRIEVAL_QUERY", outputDimensionality?}` → `{embedding: {values}}`.
Documents: `POST {base}/models/{model}:batchEmbedContents` with `{requests: [...]}` (at most 100,
taskType `RETRIEVAL_DOCUMENT`) → `{embeddings: [{values}]}`. The key travels in the
`x-goog-api-key` header, never in the URL, so it cannot leak into logs of URLs. Errors come as
`{error: {code, message, status}}`; 429 `RESOURCE_EXHAUSTED` is a rate limit and is retried.
Vectors truncated by `outputDimensionality` are not unit length: the base normalises them.

With `batch.enabled`, documents go through the async batch API (`:asyncBatchEmbedContent`, see
gemini_batch.py) and fall back to inline requests when a batch fails; a 404 there turns batch
mode off for good.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

import httpx
from typing_extensions import override

from memlane.adapters.embedding._http import JSON, HttpEmbeddingProvider, RawVectors, as_floats
from memlane.adapters.embedding.batch import BatchEmbedder
from memlane.adapters.embedding.gemini_batch import GeminiBatchFlow
from memlane.application.ports.embedding import (
    EmbeddingRejected,
    ProviderNotConfigured,
    Vector,
)
from memlane.domain.config import BatchSettings

DEFAULT_MODEL = "gemini-embedding-001"
DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"
_NO_HEADERS: Mapping[str, str] = MappingProxyType({})
_DIMENSIONS = {
    "gemini-embedding-001": 3072,
    "gemini-embedding-2-preview": 3072,
    "text-embedding-004": 768,
}
_MAX_INPUT_TOKENS = {
    "gemini-embedding-001": 2048,
    "text-embedding-004": 2048,
    "gemini-embedding-2-preview": 8192,
}
_FIXED_OUTPUT_SIZES = {"gemini-embedding-2-preview": (768, 1536, 3072)}


def _normalise_model(model: str) -> str:
    model = model.strip().removeprefix("models/")
    for prefix in ("gemini/", "google/"):
        model = model.removeprefix(prefix)
    return model or DEFAULT_MODEL


def _normalise_base_url(base_url: str) -> str:
    # Users paste the OpenAI-compatibility URL (".../v1beta/openai/"); the native API lives above.
    index = base_url.find("/openai")
    return (base_url[:index] if index >= 0 else base_url).rstrip("/")


class GeminiEmbeddingProvider(HttpEmbeddingProvider):
    """Gemini embeddings with retrieval task types and optional output dimensionality."""

    provider_id = "gemini"
    max_batch_items = 100

    def __init__(
        self,
        *,
        api_key: str | None,
        model: str = DEFAULT_MODEL,
        base_url: str = DEFAULT_BASE_URL,
        headers: Mapping[str, str] = _NO_HEADERS,
        timeout: float = 60.0,
        query_timeout: float = 20.0,
        max_concurrency: int = 4,
        max_retries: int = 3,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        dimensions: int | None = None,
        batch: BatchSettings | None = None,
    ) -> None:
        if not api_key:
            raise ProviderNotConfigured(
                "No API key found for provider gemini (set remote.apiKey or GEMINI_API_KEY)"
            )
        model = _normalise_model(model)
        allowed = _FIXED_OUTPUT_SIZES.get(model)
        if dimensions is not None and allowed is not None and dimensions not in allowed:
            raise ProviderNotConfigured(
                f"gemini: {model} accepts outputDimensionality {allowed}, not {dimensions}"
            )
        self._output_dimensionality = dimensions
        super().__init__(
            model=model,
            base_url=_normalise_base_url(base_url or DEFAULT_BASE_URL),
            auth_headers={"x-goog-api-key": api_key},
            headers=headers,
            secret=api_key,
            timeout=timeout,
            query_timeout=query_timeout,
            max_concurrency=max_concurrency,
            max_retries=max_retries,
            transport=transport,
            sleep=sleep,
            dimensions=dimensions or _DIMENSIONS.get(model),
            output_dimensionality=dimensions,
            max_input_tokens=_MAX_INPUT_TOKENS.get(model, 2048),
        )
        self._batch: BatchEmbedder | None = None
        if batch is not None and batch.enabled:
            flow = GeminiBatchFlow(
                send=self._send,
                client=self._client,
                base_url=self._base_url,
                model=self._model,
                settings=batch,
                request_body=self._batch_line,
                redact=self._redact,
                sleep=sleep,
            )
            self._batch = BatchEmbedder(flow, provider=self.provider_id)

    @property
    def batch_active(self) -> bool:
        """True while documents go through the async batch API (off after failures or a 404)."""
        return self._batch is not None and self._batch.active

    @override
    def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        if self._batch is not None:
            raw = self._batch.try_embed(texts)
            if raw is not None:
                return self._finish_vectors(raw, len(texts))
        return super().embed_documents(texts)

    @override
    def _embed_batch(
        self, texts: Sequence[str], *, query: bool, deadline: float | None
    ) -> RawVectors:
        task = "RETRIEVAL_QUERY" if query else "RETRIEVAL_DOCUMENT"
        if query:
            url = self._url(f"/models/{self._model}:embedContent")
            payload = self._post_json(url, self._request(texts[0], task), deadline=deadline)
            embedding = payload.get("embedding") if isinstance(payload, dict) else None
            if not isinstance(embedding, dict):
                raise EmbeddingRejected("gemini: response has no 'embedding'")
            return [as_floats(embedding.get("values"))]
        url = self._url(f"/models/{self._model}:batchEmbedContents")
        body = {"requests": [self._request(text, task) for text in texts]}
        payload = self._post_json(url, body, deadline=deadline)
        embeddings = payload.get("embeddings") if isinstance(payload, dict) else None
        if not isinstance(embeddings, list):
            raise EmbeddingRejected("gemini: response has no 'embeddings' list")
        return [
            as_floats(item.get("values") if isinstance(item, dict) else None) for item in embeddings
        ]

    def _request(self, text: str, task: str) -> dict[str, JSON]:
        request: dict[str, JSON] = {
            "model": f"models/{self._model}",
            "content": {"parts": [{"text": text}]},
            "taskType": task,
        }
        if self._output_dimensionality is not None:
            request["outputDimensionality"] = self._output_dimensionality
        return request

    def _batch_line(self, text: str) -> JSON:
        # A batch line names no model: the batch's own model applies to every request.
        request = self._request(text, "RETRIEVAL_DOCUMENT")
        del request["model"]
        return request
