"""Fake: EmbeddingProvider with deterministic hashed bag-of-words vectors, call log and failures.

Each word (lowercased `\\w+` run) adds ±1 to a bucket chosen by a stable hash, so texts sharing
words have high cosine similarity: ranking tests mean something without a model.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from memlane.application.ports.embedding import EmbeddingError, Vector
from memlane.domain.embedding import sanitize_and_normalize

_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class EmbedCall:
    """One call the fake received."""

    kind: Literal["query", "documents"]
    texts: tuple[str, ...]


@dataclass
class FakeEmbeddingProvider:
    """In-memory EmbeddingProvider; `fail_next(error)` makes the next call raise `error`."""

    dimensions: int = 16
    model: str = "fake-bag-of-words"
    id: str = "fake"
    max_input_tokens: int = 8192
    calls: list[EmbedCall] = field(default_factory=list)
    _failures: list[EmbeddingError] = field(default_factory=list)

    @property
    def key(self) -> str:
        return hashlib.sha256(f"{self.id}:{self.model}:{self.dimensions}".encode()).hexdigest()

    @property
    def embedded_texts(self) -> list[str]:
        """Every document text embedded so far, in order (to assert cache behaviour)."""
        return [text for call in self.calls if call.kind == "documents" for text in call.texts]

    def fail_next(self, error: EmbeddingError) -> None:
        """Make the next embed call raise `error` (queue several to fail several calls)."""
        self._failures.append(error)

    def embed_query(self, text: str) -> Vector:
        self._record("query", [text])
        return self._vector(text)

    def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        self._record("documents", texts)
        return [self._vector(text) for text in texts]

    def _record(self, kind: Literal["query", "documents"], texts: Sequence[str]) -> None:
        self.calls.append(EmbedCall(kind, tuple(texts)))
        if self._failures:
            raise self._failures.pop(0)

    def _vector(self, text: str) -> Vector:
        vector = [0.0] * self.dimensions
        words = _WORD.findall(text.lower())
        if not words:
            vector[0] = 1.0  # a fixed unit vector keeps the unit-norm invariant for blank text
            return vector
        for word in words:
            digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self.dimensions
            vector[bucket] += 1.0 if digest[4] & 1 else -1.0
        if not any(vector):  # every word cancelled out: keep the unit-norm invariant
            vector[0] = 1.0
        return sanitize_and_normalize(vector)
