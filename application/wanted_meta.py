"""Application: the IndexMeta the configuration asks for (a stored meta that differs is rebuilt)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from memlane.application.embedding_runtime import EmbeddingRuntime
from memlane.application.ports.file_source import FileSource
from memlane.application.ports.index_store import IndexStore
from memlane.domain.config import MemorySettings
from memlane.domain.index_meta import (
    CHUNKER_VERSION,
    KEYWORD_ONLY_MODEL,
    SCHEMA_VERSION,
    IndexMeta,
)
from memlane.domain.redaction_scope import redaction_fingerprint
from memlane.domain.sources import Source


class WantedMeta:
    """The IndexMeta this configuration asks for; a stored meta that differs means rebuild."""

    def __init__(
        self,
        *,
        store: IndexStore,
        runtime: EmbeddingRuntime,
        sources: Mapping[Source, FileSource],
        settings: MemorySettings,
        scope_hash: str,
        workspace: str = "",
    ) -> None:
        self._store = store
        self._runtime = runtime
        self._sources = tuple(sorted(sources))
        self._settings = settings
        self._scope_hash = scope_hash
        self._workspace = workspace

    def __call__(self) -> IndexMeta:
        """Return the wanted meta; embedding fields stay as stored when keyword-only."""
        provider = self._runtime.provider
        stored = self._store.meta()
        base = self.shape()
        if provider is not None:
            return replace(
                base,
                provider=provider.id,
                model=provider.model,
                provider_key=provider.key,
                dimensions=provider.dimensions,
            )
        if stored is not None:  # keep the vectors we have for when the provider returns
            return replace(
                base,
                provider=stored.provider,
                model=stored.model,
                provider_key=stored.provider_key,
                dimensions=stored.dimensions,
            )
        return base

    def shape(self) -> IndexMeta:
        """The wanted meta's shape (what `reindex_reason` compares), keyword-only: it selects
        no provider, so `status` can tell a rebuild is due without loading a model."""
        return IndexMeta(
            schema_version=SCHEMA_VERSION,
            chunker_version=CHUNKER_VERSION,
            sources=self._sources,
            scope_hash=self._scope_hash,
            chunk_tokens=self._settings.chunking.tokens,
            chunk_overlap=self._settings.chunking.overlap,
            session_chunk_tokens=self._settings.session_chunking.tokens,
            session_chunk_overlap=self._settings.session_chunking.overlap,
            provider="none",
            model=KEYWORD_ONLY_MODEL,
            provider_key="",
            dimensions=None,
            workspace=self._workspace,
            redaction=redaction_fingerprint(self._settings.redaction),
        )
