"""Adapter: EmbeddingProvider running a GGUF embedding model through llama-cpp-python (optional).

For users who point `local.modelPath` at a `.gguf` embedding model (the reference system's choice,
e.g. embeddinggemma-300m). llama-cpp-python is an optional extra (`pip install memlane[gguf]`);
without it, or without the file, the provider reports ProviderNotConfigured. No prefixes are
added: GGUF embedding models differ in their conventions. Calls are serialised with a lock.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memlane.adapters.embedding.in_process import InProcessProvider, engine_call
from memlane.adapters.embedding.keys import provider_key
from memlane.application.ports.embedding import (
    EmbeddingRejected,
    ProviderNotConfigured,
    Vector,
)
from memlane.domain.embedding import sanitize_and_normalize


class GgufEmbeddingProvider(InProcessProvider):
    """A local GGUF embedding model loaded once with llama-cpp-python (pooled embeddings)."""

    def __init__(
        self, *, model_path: str, threads: int | None = None, context_size: int = 2048
    ) -> None:
        path = Path(model_path).expanduser()
        try:
            import llama_cpp
        except ImportError as exc:
            raise ProviderNotConfigured(
                "local: GGUF models need llama-cpp-python (pip install 'memlane[gguf]')"
            ) from exc
        if not path.is_file():
            raise ProviderNotConfigured(f"local: model file not found: {model_path}")
        try:
            self._llm: Any = llama_cpp.Llama(
                model_path=str(path),
                embedding=True,
                n_threads=threads,
                n_ctx=context_size,
                verbose=False,
            )
        except (OSError, RuntimeError, ValueError) as exc:
            raise ProviderNotConfigured(f"local: cannot load {path.name}: {exc}") from exc
        super().__init__(
            model=path.name,
            dimensions=int(self._llm.n_embd()),
            max_input_tokens=context_size,
            key=provider_key(provider="local", model=path.name, base_url=str(path)),
        )
        self._lock = threading.Lock()

    def embed_query(self, text: str) -> Vector:
        return self.embed_documents([text])[0]

    def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        if not texts:
            return []
        with engine_call(self._lock):
            raw = self._llm.embed(list(texts))
        if len(raw) != len(texts):
            raise EmbeddingRejected(f"local: {len(raw)} vectors returned for {len(texts)} inputs")
        vectors = [sanitize_and_normalize([float(x) for x in vector]) for vector in raw]
        if any(len(vector) != self._dimensions for vector in vectors):
            raise EmbeddingRejected("local: the model returned vectors of another size")
        return vectors
