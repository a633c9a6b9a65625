"""Adapter: EmbeddingProvider over the Mistral embeddings API.

`POST {base_url}/embeddings` with `{model, input: [...]}` and Bearer auth, answered in the OpenAI
shape `{data: [{index, embedding}]}`. Error bodies are either OpenAI-like `{error: {...}}` or flat
`{object: "error", message, type, code}`. `dimensions` is sent as `output_dimension` (only
codestral-embed accepts it).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType

from typing_extensions import override

from memlane.adapters.embedding._http import HttpEmbeddingProvider
from memlane.adapters.embedding._wire import JSON, RawVectors, vectors_from_data


class MistralEmbeddingProvider(HttpEmbeddingProvider):
    """Mistral AI embeddings (mistral-embed by default)."""

    provider_id = "mistral"
    model_prefixes = ("mistral/",)
    known_dimensions = MappingProxyType({"mistral-embed": 1024, "codestral-embed": 1536})
    input_token_limits = MappingProxyType({"mistral-embed": 8192, "codestral-embed": 8192})
    max_batch_items = 512

    @override
    def _embed_batch(
        self, texts: Sequence[str], *, query: bool, deadline: float | None
    ) -> RawVectors:
        body: dict[str, JSON] = {"model": self._model, "input": list(texts)}
        if self._requested_dimensions is not None:
            body["output_dimension"] = self._requested_dimensions
        return vectors_from_data(self._post_json(self._url("/embeddings"), body, deadline=deadline))
