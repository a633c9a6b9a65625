"""Adapter: EmbeddingProvider over a local (or remote) Ollama server.

Current API: `POST {base}/api/embed` with `{model, input: [...]}` → `{embeddings: [[...]]}`, one
request per batch. Servers older than Ollama 0.3 answer 404 there; we then switch, for the life of
the provider, to the legacy `POST {base}/api/embeddings` with `{model, prompt}` → `{embedding}`, one
request per text. A 404 whose body says the *model* is missing is a configuration error and is
reported as such instead of triggering the fallback. No key is needed; a configured one is sent as
Bearer (for proxies). A base URL ending in `/v1` (the OpenAI-compatible path) is trimmed.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from types import MappingProxyType

import httpx
from typing_extensions import override

from memlane.adapters.embedding._http import HttpEmbeddingProvider
from memlane.adapters.embedding._http_options import HttpOptions
from memlane.adapters.embedding._wire import JSON, RawVectors, as_floats, error_fields
from memlane.application.ports.embedding import EmbeddingRejected

_NOT_FOUND = frozenset({404})


class OllamaEmbeddingProvider(HttpEmbeddingProvider):
    """Ollama embeddings (nomic-embed-text by default), current and legacy endpoints."""

    provider_id = "ollama"
    requires_api_key = False
    model_prefixes = ("ollama/",)
    # Keyed by the model name without its tag ("bge-m3:567m" -> "bge-m3").
    known_dimensions = MappingProxyType(
        {
            "nomic-embed-text": 768,
            "mxbai-embed-large": 1024,
            "all-minilm": 384,
            "snowflake-arctic-embed": 1024,
            "bge-m3": 1024,
            "multilingual-e5-small": 384,
        }
    )
    max_batch_items = 256

    def __init__(self, options: HttpOptions) -> None:
        super().__init__(options)
        self._legacy = False
        self._legacy_lock = threading.Lock()

    @override
    def _normalise_base_url(self, base_url: str) -> str:
        # The OpenAI-compatible path ("/v1") is not where the native API lives.
        return base_url.rstrip("/").removesuffix("/v1")

    @override
    def _known_dimensions(self, model: str) -> int | None:
        return self.known_dimensions.get(model.split(":", 1)[0])

    @property
    def uses_legacy_endpoint(self) -> bool:
        """True once the server turned out to lack /api/embed."""
        return self._legacy

    @override
    def _embed_batch(
        self, texts: Sequence[str], *, query: bool, deadline: float | None
    ) -> RawVectors:
        if not self._legacy:
            body = {"model": self._model, "input": list(texts)}
            response = self._post_or_404(self._url("/api/embed"), body, deadline)
            if response is not None:
                embeddings = self._field(self._parse_json(response), "embeddings")
                if not isinstance(embeddings, list):
                    raise EmbeddingRejected("ollama: response has no 'embeddings' list")
                return [as_floats(item) for item in embeddings]
            with self._legacy_lock:
                self._legacy = True
        return [self._embed_legacy(text, deadline) for text in texts]

    def _embed_legacy(self, text: str, deadline: float | None) -> list[float]:
        body = {"model": self._model, "prompt": text}
        response = self._post_or_404(self._url("/api/embeddings"), body, deadline)
        if response is None:
            raise EmbeddingRejected("ollama: neither /api/embed nor /api/embeddings exists here")
        return as_floats(self._field(self._parse_json(response), "embedding"))

    def _post_or_404(self, url: str, body: JSON, deadline: float | None) -> httpx.Response | None:
        """POST; None when the endpoint does not exist (a 404 that is not about the model)."""
        response = self._send("POST", url, json=body, deadline=deadline, passthrough=_NOT_FOUND)
        if response.status_code != 404:
            return response
        _, message = error_fields(response)
        if "model" in message.lower():
            raise EmbeddingRejected(f"ollama embeddings failed: 404 {message}")
        return None

    def _field(self, payload: JSON, name: str) -> JSON:
        if not isinstance(payload, dict) or name not in payload:
            raise EmbeddingRejected(f"ollama: response has no '{name}'")
        return payload[name]
