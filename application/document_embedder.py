"""Application: embed chunks through the embedding cache, so unchanged text is embedded once."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memlane.application.ports.embedding import (
    BATCH_JOB_ITEMS,
    BatchJobs,
    EmbeddingProvider,
    Vector,
)
from memlane.application.ports.index_store import CacheKey, IndexWriter
from memlane.domain.chunking import estimate_tokens
from memlane.domain.chunks import Chunk, ContentHash
from memlane.domain.embedding import (
    HARD_MAX_INPUT_BYTES,
    sanitize_and_normalize,
    split_to_utf8_limit,
)
from memlane.domain.hashing import sha256_text

# Texts handed to the provider per call: small enough for steady progress reports,
# large enough for the provider's own batching (token budget, concurrency) to pay off.
_GROUP = 64


def _group_size(provider: EmbeddingProvider) -> int:
    """Texts per provider call: _GROUP, or a whole job's worth for a batch API, where every
    call is one job of minutes to hours whatever its size (ports.embedding.BatchJobs)."""
    if isinstance(provider, BatchJobs) and provider.batch_active:
        return BATCH_JOB_ITEMS
    return _GROUP


@dataclass(frozen=True, slots=True)
class EmbedOutcome:
    """One vector per chunk, in order, and how many came from the provider vs the cache."""

    vectors: list[Vector]
    embedded: int
    cached: int


def cache_key(provider: EmbeddingProvider) -> CacheKey:
    """Return the cache partition of `provider` (its secret-free configuration fingerprint)."""
    return CacheKey(provider=provider.id, model=provider.model, provider_key=provider.key)


class DocumentEmbedder:
    """Embeds chunks with the cache in front of the provider.

    Cache entries are keyed by the provider's id, model and machine-independent configuration key,
    so vectors are reused only for the same model and settings, on any machine.
    """

    def __init__(self, provider: EmbeddingProvider, cache: IndexWriter, *, use_cache: bool = True):
        self._provider = provider
        self._cache = cache
        self._use_cache = use_cache
        self._key = cache_key(provider)

    def embed(
        self, chunks: Sequence[Chunk], on_progress: Callable[[int], None] | None = None
    ) -> EmbedOutcome:
        """Return vectors for `chunks`; only texts missing from the cache reach the provider."""
        unique: dict[ContentHash, str] = {}
        for chunk in chunks:
            unique.setdefault(chunk.hash, chunk.indexed_text)
        known, embedded = self._through_cache(unique, on_progress)
        return EmbedOutcome(
            vectors=[known[c.hash] for c in chunks],
            embedded=embedded,
            cached=len(unique) - embedded,
        )

    def _through_cache(
        self, unique: dict[ContentHash, str], on_progress: Callable[[int], None] | None
    ) -> tuple[dict[ContentHash, Vector], int]:
        """The vector of every text (by its hash), the cache first; and how many the provider
        embedded."""
        known: dict[ContentHash, Vector] = {}
        if self._use_cache and unique:
            known = self._cache.cache_get(self._key, list(unique))
        missing = [h for h in unique if h not in known]
        size = _group_size(self._provider)
        for start in range(0, len(missing), size):
            group = missing[start : start + size]
            fresh = dict(
                zip(group, self._embed_within_limit([unique[h] for h in group]), strict=True)
            )
            if self._use_cache:
                self._cache.cache_put(self._key, fresh)
            known.update(fresh)
            if on_progress is not None:
                on_progress(len(group))
        return known, len(missing)

    def embed_texts(
        self, texts: Sequence[str], on_progress: Callable[[int], None] | None = None
    ) -> list[Vector]:
        """Return a vector for each text (a note chunk's pieces), cached by the text's hash."""
        unique = {sha256_text(t): t for t in texts}
        known, _ = self._through_cache(unique, on_progress)
        return [known[sha256_text(t)] for t in texts]

    def cached(self, chunks: Sequence[Chunk]) -> list[Vector | None]:
        """Return the cached vector of each chunk, None where the cache has none (no provider
        call: a rebuild writes these at once and leaves the rest to the vector backfill)."""
        if not self._use_cache or not chunks:
            return [None] * len(chunks)
        known = self._cache.cache_get(self._key, list(dict.fromkeys(c.hash for c in chunks)))
        return [known.get(c.hash) for c in chunks]

    def _embed_within_limit(self, texts: Sequence[str]) -> list[Vector]:
        """Embed texts; one longer than the model accepts is split and its pieces averaged.

        Estimated tokens decide whether to split, so ordinary chunks reach the provider whole
        (the local model windows long inputs itself); pieces are cut at a UTF-8 byte limit, an
        upper bound on tokens, and their vectors are averaged by length and re-normalised.
        """
        limit = self._provider.max_input_tokens
        byte_limit = min(HARD_MAX_INPUT_BYTES, limit)
        pieces: list[str] = []
        owners: list[int] = []
        for index, text in enumerate(texts):
            parts = (
                split_to_utf8_limit(text, byte_limit) if estimate_tokens(text) > limit else [text]
            )
            pieces += parts
            owners += [index] * len(parts)
        vectors = self._provider.embed_documents(pieces)
        if len(pieces) == len(texts):
            return vectors
        sums: list[list[float]] = [[] for _ in texts]
        for owner, piece, vector in zip(owners, pieces, vectors, strict=True):
            weight = float(len(piece))
            if not sums[owner]:
                sums[owner] = [0.0] * len(vector)
            sums[owner] = [a + weight * b for a, b in zip(sums[owner], vector, strict=True)]
        return [sanitize_and_normalize(total) for total in sums]
