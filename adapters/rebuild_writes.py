"""Adapters: the writes of a full reindex in progress, the same for every store family.

A rebuild (SQLite's temporary database, PostgreSQL's temporary agent id) takes its writes
through an IndexWriter serving the rebuilt index, and refuses every call once it has been
committed or aborted. Only how it commits and aborts differs between the families, so each
subclasses `RebuildWrites` and writes those two; this module exists so that the forwarding and
its guard are written once. It imports no store family, and both import it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from memlane.application.ports.embedding import Vector
from memlane.application.ports.index_store import CacheKey, IndexedFile, IndexWriter, StoreError
from memlane.domain.chunks import Chunk, ContentHash
from memlane.domain.index_meta import IndexMeta


class RebuildWrites:
    """Forwards IndexWriter calls to the rebuild's writer until the rebuild is finished."""

    def __init__(self, writer: IndexWriter, *, closed_message: str) -> None:
        """Write through `writer`; once `_finished`, calls raise StoreError(`closed_message`)."""
        self._writer = writer
        self._closed_message = closed_message
        self._finished = False

    def _check_open(self) -> None:
        if self._finished:
            raise StoreError(self._closed_message)

    def replace_file(
        self,
        file: IndexedFile,
        chunks: Sequence[Chunk],
        vectors: Sequence[Vector | None],
        model: str,
    ) -> None:
        """Write one file's rows into the rebuild (see IndexWriter)."""
        self._check_open()
        self._writer.replace_file(file, chunks, vectors, model)

    def set_meta(self, meta: IndexMeta) -> None:
        """Store the meta of the rebuilt index."""
        self._check_open()
        self._writer.set_meta(meta)

    def cache_get(self, key: CacheKey, hashes: Sequence[ContentHash]) -> dict[ContentHash, Vector]:
        """Read the embedding cache the rebuild uses (the family's module says which one)."""
        self._check_open()
        return self._writer.cache_get(key, hashes)

    def cache_put(self, key: CacheKey, vectors: Mapping[ContentHash, Vector]) -> None:
        """Add vectors to the embedding cache the rebuild uses."""
        self._check_open()
        self._writer.cache_put(key, vectors)
