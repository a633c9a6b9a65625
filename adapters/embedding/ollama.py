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
import time
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

import httpx
from typing_extensions import override

from memlane.adapters.embedding._http import (
    JSON,
    HttpEmbeddingProvider,
    RawVectors,
    as_floats,
    error_fields,
)
from memlane.application.ports.embedding import EmbeddingRejected

DEFAULT_MODEL = "nomic-embed-text"
DEFAULT_BASE_URL = "http://127.0.0.1:11434"
_NO_HEADERS: Mapping[str, str] = MappingProxyType({})
_NOT_FOUND = frozenset({404})
_DIMENSIONS = {
    "nomic-embed-text": 768,
    "mxbai-embed-large": 1024,
    "all-minilm": 384,
    "snowflake-arctic-embed": 1024,
    "bge-m3": 1024,
    "multilingual-e5-small": 384,
}


def _normalise_base_url(base_url: str) -> str:
    base = base_url.rstrip("/")
    return base.removesuffix("/v1")


class OllamaEmbeddingProvider(HttpEmbeddingProvider):
    """Ollama embeddings (nomic-embed-text by default), current and legacy endpoints."""

    provider_id = "ollama"
    max_batch_items = 256

    def __init__(
        self,
        *,
        api_key: str | None = None,
        model: str = DEFAULT_MODEL,
        base_url: str = DEFAULT_BASE_URL,
        headers: Mapping[str, str] = _NO_HEADERS,
        timeout: float = 120.0,
        query_timeout: float = 30.0,
        max_concurrency: int = 2,
        max_retries: int = 3,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        dimensions: int | None = None,
    ) -> None:
        model = model.strip().removeprefix("ollama/") or DEFAULT_MODEL
        base_tag = model.split(":", 1)[0]
        super().__init__(
            model=model,
            base_url=_normalise_base_url(base_url or DEFAULT_BASE_URL),
            auth_headers={"Authorization": f"Bearer {api_key}"} if api_key else {},
            headers=headers,
            secret=api_key,
            timeout=timeout,
            query_timeout=query_timeout,
            max_concurrency=max_concurrency,
            max_retries=max_retries,
            transport=transport,
            sleep=sleep,
            dimensions=dimensions or _DIMENSIONS.get(base_tag),
            output_dimensionality=dimensions,
            max_input_tokens=8192,
        )
        self._legacy = False
        self._legacy_lock = threading.Lock()

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
