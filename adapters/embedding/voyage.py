"""Adapter: EmbeddingProvider over the Voyage AI embeddings API.

`POST {base_url}/embeddings` with `{model, input: [...], input_type: "query" | "document"}` (plus
`output_dimension` when configured) and Bearer auth, answered as `{data: [{embedding, index}]}`;
errors come as `{detail: "..."}`. With `batch.enabled`, documents go through Voyage's batch API
(files upload, `/batches` with `request_params`, poll, output file; see batch.py) and fall back to
inline requests when a batch fails.
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


class VoyageEmbeddingProvider(HttpEmbeddingProvider):
    """Voyage AI embeddings with query / document input types."""

    provider_id = "voyage"
    supports_batch = True
    model_prefixes = ("voyage/",)
    known_dimensions = MappingProxyType(
        {
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
    )
    input_token_limits = MappingProxyType(
        {
            "voyage-3": 32000,
            "voyage-3-lite": 16000,
            "voyage-code-3": 32000,
            "voyage-4-large": 32000,
        }
    )
    default_input_tokens = 32000
    max_batch_items = 1000

    @override
    def _batch_runner(self, settings: BatchSettings) -> BatchRunner:
        request_params: dict[str, JSON] = {"model": self._model, "input_type": "document"}
        if self._requested_dimensions is not None:
            request_params["output_dimension"] = self._requested_dimensions
        flow = FileBatchFlow(
            send=self._send,
            base_url=self._base_url,
            settings=settings,
            line_body=lambda text: {"input": [text]},
            create_body={
                "endpoint": "/v1/embeddings",
                "completion_window": "12h",
                "request_params": request_params,
                "metadata": {"source": "memlane"},
            },
            line_url=None,
            sleep=self._sleep,
        )
        return BatchEmbedder(flow, provider=self.provider_id)

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
