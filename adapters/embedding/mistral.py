"""Adapter: EmbeddingProvider over the Mistral embeddings API.

`POST {base_url}/embeddings` with `{model, input: [...]}` and Bearer auth, answered in the OpenAI
shape `{data: [{index, embedding}]}`. Error bodies are either OpenAI-like `{error: {...}}` or flat
`{object: "error", message, type, code}`. `dimensions` is sent as `output_dimension` (only
codestral-embed accepts it).
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
from memlane.application.ports.embedding import ProviderNotConfigured

DEFAULT_MODEL = "mistral-embed"
DEFAULT_BASE_URL = "https://api.mistral.ai/v1"
_NO_HEADERS: Mapping[str, str] = MappingProxyType({})
_DIMENSIONS = {"mistral-embed": 1024, "codestral-embed": 1536}
_MAX_INPUT_TOKENS = {"mistral-embed": 8192, "codestral-embed": 8192}


class MistralEmbeddingProvider(HttpEmbeddingProvider):
    """Mistral AI embeddings (mistral-embed by default)."""

    provider_id = "mistral"
    max_batch_items = 512

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
    ) -> None:
        if not api_key:
            raise ProviderNotConfigured(
                "No API key found for provider mistral (set remote.apiKey or MISTRAL_API_KEY)"
            )
        model = model.strip().removeprefix("mistral/") or DEFAULT_MODEL
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

    @override
    def _embed_batch(
        self, texts: Sequence[str], *, query: bool, deadline: float | None
    ) -> RawVectors:
        body: dict[str, JSON] = {"model": self._model, "input": list(texts)}
        if self._requested_dimensions is not None:
            body["output_dimension"] = self._requested_dimensions
        return vectors_from_data(self._post_json(self._url("/embeddings"), body, deadline=deadline))
