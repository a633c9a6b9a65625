"""Domain: what built the index (IndexMeta) and when a rebuild or a re-embedding is needed.

Two kinds of drift are told apart, so that a model change does not rebuild the whole index:

* the *shape* of the index (schema, sources, extra-path scope, chunking) changed: every chunk
  may differ, so a safe full reindex is required;
* only the *embedding model* changed (or vectors were never written): chunks and keyword rows
  stay valid, and only vectors are (re)computed, through the embedding cache.

An index without any vector (keyword-only mode, empty workspace) records `dimensions=None`;
that is a normal state, never a reason to rebuild again (the reference's reindex storm).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import cast

from memlane.domain.config import SESSION_CHUNKING
from memlane.domain.events import ReindexReason
from memlane.domain.sources import Source

SCHEMA_VERSION = 1
# Raised when chunks change for the same files and settings, so stored indexes are rebuilt
# (2: transcripts chunked apart from notes; 3: notes indexed with their heading trail;
# 4: a line longer than a chunk is cut between sentences or words, not at the exact budget;
# 5: setext headings, a fence closed only by its own marker, no cut inside a visible character;
# 6: a note chunk holding undated text beside a dated section spans the mtime too;
# 7: transcripts in Claude Code's record shape are read, not indexed as empty).
CHUNKER_VERSION = 7
KEYWORD_ONLY_MODEL = "fts-only"


@dataclass(frozen=True, slots=True)
class IndexMeta:
    """The settings an index was built with, stored beside it."""

    schema_version: int
    chunker_version: int
    sources: tuple[Source, ...]
    scope_hash: str
    chunk_tokens: int
    chunk_overlap: int
    provider: str
    model: str
    provider_key: str
    dimensions: int | None
    session_chunk_tokens: int = SESSION_CHUNKING.tokens
    session_chunk_overlap: int = SESSION_CHUNKING.overlap
    # The workspace the index serves ("" in indexes from before it was recorded). Not a shape:
    # a different one is refused before any sync, or moved to on purpose (application/workspace).
    workspace: str = ""
    # What the text was masked with (redaction_scope.redaction_fingerprint); "" in indexes from
    # before it was recorded, which are rebuilt once so the current masking reaches them.
    redaction: str = ""


def reindex_reason(
    stored: IndexMeta | None, wanted: IndexMeta, *, legacy_scope_hash: str = ""
) -> ReindexReason | None:
    """Return why the index must be rebuilt from scratch, or None when it can be kept.

    Only shape changes count. Vectors of another provider or model are replaced by the vector
    backfill instead, chunk by chunk, through the embedding cache. `legacy_scope_hash` is this
    configuration's fingerprint in the older form (which hashed host paths): an index that
    recorded it has the same scope, and only its meta is rewritten.
    """
    if stored is None:
        return "no_index"
    if stored.schema_version != wanted.schema_version:
        return "schema_changed"
    if _chunking(stored) != _chunking(wanted):
        return "chunking_changed"
    if tuple(sorted(stored.sources)) != tuple(sorted(wanted.sources)):
        return "sources_changed"
    if stored.scope_hash not in {wanted.scope_hash, legacy_scope_hash or wanted.scope_hash}:
        return "scope_changed"
    if stored.redaction != wanted.redaction:
        return "redaction_changed"
    return None


def built_by_newer(stored: IndexMeta, wanted: IndexMeta) -> str | None:
    """What says that `stored` was built by a newer memlane than the one wanting `wanted` (a
    higher schema or chunker version), or None. Such an index is not rebuilt down."""
    newer = [
        f"{name} {mine}, this one {ours}"
        for name, mine, ours in (
            ("index schema", stored.schema_version, wanted.schema_version),
            ("chunker", stored.chunker_version, wanted.chunker_version),
        )
        if mine > ours
    ]
    return "; ".join(newer) or None


def _chunking(meta: IndexMeta) -> tuple[int, ...]:
    return (
        meta.chunker_version,
        meta.chunk_tokens,
        meta.chunk_overlap,
        meta.session_chunk_tokens,
        meta.session_chunk_overlap,
    )


def vector_label(model: str, provider_key: str) -> str:
    """The label stored beside each chunk's vector; search and backfill match it exactly.

    The model name alone is not enough: two providers can serve models of the same name that
    embed differently (local's and ollama's multilingual-e5-small), so the label also carries
    the provider key (provider, model, endpoint, dimensions, headers). A label that differs from
    the active provider's marks the vector for re-embedding through the cache.
    """
    return f"{model}@{provider_key[:16]}" if provider_key else model


def index_meta_to_json(meta: IndexMeta) -> str:
    """Encode an IndexMeta as the JSON every store keeps (so `store copy` moves it as text)."""
    return json.dumps(
        {
            "schema_version": meta.schema_version,
            "chunker_version": meta.chunker_version,
            "sources": list(meta.sources),
            "scope_hash": meta.scope_hash,
            "chunk_tokens": meta.chunk_tokens,
            "chunk_overlap": meta.chunk_overlap,
            "provider": meta.provider,
            "model": meta.model,
            "provider_key": meta.provider_key,
            "dimensions": meta.dimensions,
            "session_chunk_tokens": meta.session_chunk_tokens,
            "session_chunk_overlap": meta.session_chunk_overlap,
            "workspace": meta.workspace,
            "redaction": meta.redaction,
        }
    )


def index_meta_from_json(text: str) -> IndexMeta:
    """Decode the JSON of `index_meta_to_json`."""
    data = json.loads(text)
    return IndexMeta(
        schema_version=int(data["schema_version"]),
        chunker_version=int(data["chunker_version"]),
        sources=tuple(cast(list[Source], data["sources"])),
        scope_hash=str(data["scope_hash"]),
        chunk_tokens=int(data["chunk_tokens"]),
        chunk_overlap=int(data["chunk_overlap"]),
        provider=str(data["provider"]),
        model=str(data["model"]),
        provider_key=str(data["provider_key"]),
        dimensions=None if data["dimensions"] is None else int(data["dimensions"]),
        # Absent from metas written before these fields existed: -1 forces a rebuild.
        session_chunk_tokens=int(data.get("session_chunk_tokens", -1)),
        session_chunk_overlap=int(data.get("session_chunk_overlap", -1)),
        workspace=str(data.get("workspace", "")),  # absent before issue #14: none recorded
        redaction=str(data.get("redaction", "")),  # absent before session 30: rebuilt once
    )
