"""IndexMeta: when to rebuild, when only to re-embed, and never a reindex storm."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memlane.domain.index_meta import (
    KEYWORD_ONLY_MODEL,
    IndexMeta,
    needs_reembedding,
    reindex_reason,
)

META = IndexMeta(
    schema_version=1,
    chunker_version=1,
    sources=("memory", "sessions"),
    scope_hash="scope",
    chunk_tokens=400,
    chunk_overlap=80,
    provider="local",
    model="multilingual-e5-small",
    provider_key="key-1",
    dimensions=384,
)
KEYWORD_ONLY = replace(
    META, provider="none", model=KEYWORD_ONLY_MODEL, provider_key="", dimensions=None
)


class TestReindexReason:
    def test_a_missing_index_needs_building(self) -> None:
        assert reindex_reason(None, META) == "no_index"

    def test_the_same_shape_needs_nothing(self) -> None:
        assert reindex_reason(META, META) is None

    @pytest.mark.parametrize(
        ("change", "reason"),
        [
            ({"schema_version": 2}, "schema_changed"),
            ({"chunker_version": 2}, "chunking_changed"),
            ({"chunk_tokens": 200}, "chunking_changed"),
            ({"chunk_overlap": 0}, "chunking_changed"),
            ({"sources": ("memory",)}, "sources_changed"),
            ({"scope_hash": "other"}, "scope_changed"),
        ],
    )
    def test_a_shape_change_rebuilds(self, change: dict[str, object], reason: str) -> None:
        assert reindex_reason(META, replace(META, **change)) == reason  # type: ignore[arg-type]

    def test_source_order_does_not_matter(self) -> None:
        assert reindex_reason(META, replace(META, sources=("sessions", "memory"))) is None

    @pytest.mark.parametrize(
        "change",
        [{"model": "other"}, {"provider": "openai"}, {"provider_key": "k2"}, {"dimensions": 1536}],
    )
    def test_an_embedding_change_never_rebuilds(self, change: dict[str, object]) -> None:
        assert reindex_reason(META, replace(META, **change)) is None  # type: ignore[arg-type]

    def test_an_index_without_vectors_is_stable(self) -> None:
        """§31.7: keyword-only or empty indexes never trigger another full reindex."""
        assert reindex_reason(KEYWORD_ONLY, KEYWORD_ONLY) is None


class TestNeedsReembedding:
    def test_another_model_or_configuration_reembeds(self) -> None:
        assert needs_reembedding(META, replace(META, model="e5-large"))
        assert needs_reembedding(META, replace(META, provider_key="key-2"))
        assert needs_reembedding(KEYWORD_ONLY, META)

    def test_the_same_model_or_going_keyword_only_does_not(self) -> None:
        assert not needs_reembedding(META, META)
        assert not needs_reembedding(META, KEYWORD_ONLY)


class TestSessionChunking:
    def test_changed_transcript_chunking_rebuilds(self) -> None:
        assert reindex_reason(META, replace(META, session_chunk_tokens=300)) == "chunking_changed"
        assert reindex_reason(META, replace(META, session_chunk_overlap=0)) == "chunking_changed"
