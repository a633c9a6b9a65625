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

from collections.abc import Sequence
from types import MappingProxyType

import httpx
from typing_extensions import override

from memlane.adapters.embedding._http import HttpEmbeddingProvider
from memlane.adapters.embedding._http_options import BatchRunner
from memlane.adapters.embedding._wire import JSON, RawVectors, as_floats
from memlane.adapters.embedding.batch import BatchEmbedder
from memlane.adapters.embedding.gemini_batch import GeminiBatchFlow
from memlane.application.ports.embedding import EmbeddingRejected, ProviderNotConfigured
from memlane.domain.config import BatchSettings
from memlane.domain.providers import GEMINI_MODEL_PREFIXES, fixed_output_sizes


class GeminiEmbeddingProvider(HttpEmbeddingProvider):
    """Gemini embeddings with retrieval task types and optional output dimensionality."""

    provider_id = "gemini"
    supports_batch = True
    supports_output_dimensions = True
    model_prefixes = GEMINI_MODEL_PREFIXES
    known_dimensions = MappingProxyType(
        {
            "gemini-embedding-001": 3072,
            "gemini-embedding-2-preview": 3072,
            "text-embedding-004": 768,
        }
    )
    input_token_limits = MappingProxyType(
        {
            "gemini-embedding-001": 2048,
            "text-embedding-004": 2048,
            "gemini-embedding-2-preview": 8192,
        }
    )
    default_input_tokens = 2048
    max_batch_items = 100

    @override
    def _check_options(self, model: str, dimensions: int | None) -> None:
        allowed = fixed_output_sizes(self.provider_id, model)
        if dimensions is not None and allowed is not None and dimensions not in allowed:
            raise ProviderNotConfigured(
                f"gemini: {model} accepts outputDimensionality {allowed}, not {dimensions}"
            )

    @override
    def _normalise_base_url(self, base_url: str) -> str:
        # Users paste the OpenAI-compatibility URL (".../v1beta/openai/"); the native API lives
        # above it. Only a path segment that is exactly "openai" goes: a gateway whose host or
        # a path segment merely starts with it ("https://openai-gw.corp/v1beta") is kept whole.
        url = httpx.URL(base_url)
        segments = url.path.split("/")
        if "openai" not in segments:
            return base_url.rstrip("/")
        path = "/".join(segments[: segments.index("openai")])
        return str(url.copy_with(path=path or "/")).rstrip("/")

    @override
    def _auth_headers(self, api_key: str | None) -> dict[str, str]:
        return {"x-goog-api-key": api_key} if api_key else {}

    @override
    def _batch_runner(self, settings: BatchSettings) -> BatchRunner:
        flow = GeminiBatchFlow(
            send=self._send,
            client=self._client,
            base_url=self._base_url,
            model=self._model,
            settings=settings,
            request_body=self._batch_line,
            redact=self._redact,
            sleep=self._sleep,
        )
        return BatchEmbedder(flow, provider=self.provider_id)

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
        if self._requested_dimensions is not None:
            request["outputDimensionality"] = self._requested_dimensions
        return request

    def _batch_line(self, text: str) -> JSON:
        # A batch line names no model: the batch's own model applies to every request.
        request = self._request(text, "RETRIEVAL_DOCUMENT")
        del request["model"]
        return request
