"""Adapter: EmbeddingProvider over the Voyage AI embeddings API.

`POST {base_url}/embeddings` with `{model, input: [...], input_type: "query" | "document"}` (plus
`output_dimension` when configured) and Bearer auth, answered as `{data: [{embedding, index}]}`;
errors come as `{detail: "..."}`. With `batch.enabled`, documents go through Voyage's batch API
(files upload, `/batches` with `request_params`, poll, output file; see batch.py) and fall back to
inline requests when a batch fails.
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

DEFAULT_MODEL = "voyage-4-large"
DEFAULT_BASE_URL = "https://api.voyageai.com/v1"
_NO_HEADERS: Mapping[str, str] = MappingProxyType({})
_DIMENSIONS = {
    "voyage-4-large": 1024,
    "voyage-4": 1024,
    "voyage-4-lite": 1024,
    "voyage-3-large": 1024,
    "voyage-3.5": 1024,
    "voyage-3.5-lite": 1024,
    "voyage-3": 1024,
    "voyage-3-lite": 512,
    "voyage-code-3": 1024,
}
_MAX_INPUT_TOKENS = {
    "voyage-3": 32000,
    "voyage-3-lite": 16000,
    "voyage-code-3": 32000,
    "voyage-4-large": 32000,
}


class VoyageEmbeddingProvider(HttpEmbeddingProvider):
    """Voyage AI embeddings with query / document input types."""

    provider_id = "voyage"
    max_batch_items = 1000

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
                "No API key found for provider voyage (set remote.apiKey or VOYAGE_API_KEY)"
            )
        model = model.strip().removeprefix("voyage/") or DEFAULT_MODEL
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
            max_input_tokens=_MAX_INPUT_TOKENS.get(model, 32000),
        )
        self._batch: BatchEmbedder | None = None
        if batch is not None and batch.enabled:
            request_params: dict[str, JSON] = {"model": model, "input_type": "document"}
            if dimensions is not None:
                request_params["output_dimension"] = dimensions
            flow = FileBatchFlow(
                send=self._send,
                base_url=self._base_url,
                settings=batch,
                line_body=lambda text: {"input": [text]},
                create_body={
                    "endpoint": "/v1/embeddings",
                    "completion_window": "12h",
                    "request_params": request_params,
                    "metadata": {"source": "memlane"},
                },
                line_url=None,
                sleep=sleep,
            )
            self._batch = BatchEmbedder(flow, provider=self.provider_id)

    @property
    def batch_active(self) -> bool:
        """True while documents go through the batch API (off after repeated failures)."""
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
        body: dict[str, JSON] = {
            "model": self._model,
            "input": list(texts),
            "input_type": "query" if query else "document",
        }
        if self._requested_dimensions is not None:
            body["output_dimension"] = self._requested_dimensions
        return vectors_from_data(self._post_json(self._url("/embeddings"), body, deadline=deadline))
