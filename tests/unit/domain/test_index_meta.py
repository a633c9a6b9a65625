"""IndexMeta: when to rebuild, when only to re-embed, and never a reindex storm."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from memlane.domain.index_meta import (
    KEYWORD_ONLY_MODEL,
    IndexMeta,
    built_by_newer,
    index_meta_from_json,
    index_meta_to_json,
    reindex_reason,
    vector_label,
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


class TestBuiltByNewer:
    def test_a_higher_chunker_or_schema_is_a_newer_memlanes(self) -> None:
        newer_chunker = replace(META, chunker_version=2)
        newer_both = replace(META, chunker_version=2, schema_version=3)

        assert built_by_newer(newer_chunker, META) == "chunker 2, this one 1"
        assert (
            built_by_newer(newer_both, META) == "index schema 3, this one 1; chunker 2, this one 1"
        )

    def test_the_same_or_an_older_build_is_not(self) -> None:
        assert built_by_newer(META, META) is None
        assert built_by_newer(META, replace(META, chunker_version=2)) is None  # an upgrade
        assert built_by_newer(replace(META, chunk_tokens=200), META) is None  # settings


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
            ({"redaction": "other"}, "redaction_changed"),
        ],
    )
    def test_a_shape_change_rebuilds(self, change: dict[str, object], reason: str) -> None:
        assert reindex_reason(META, replace(META, **change)) == reason  # type: ignore[arg-type]

    def test_the_legacy_form_of_this_scope_is_kept_and_no_other(self) -> None:
        """An index fingerprinted before host paths were left out is not rebuilt once."""
        wanted = replace(META, scope_hash="new")

        assert reindex_reason(META, wanted, legacy_scope_hash="scope") is None
        assert reindex_reason(META, wanted, legacy_scope_hash="elsewhere") == "scope_changed"
        assert reindex_reason(replace(META, scope_hash=""), wanted) == "scope_changed"

    def test_source_order_does_not_matter(self) -> None:
        assert reindex_reason(META, replace(META, sources=("sessions", "memory"))) is None

    @pytest.mark.parametrize(
        "change",
        [{"model": "other"}, {"provider": "openai"}, {"provider_key": "k2"}, {"dimensions": 1536}],
    )
    def test_an_embedding_change_never_rebuilds(self, change: dict[str, object]) -> None:
        assert reindex_reason(META, replace(META, **change)) is None  # type: ignore[arg-type]

    def test_an_index_without_vectors_is_stable(self) -> None:
        """Keyword-only or empty indexes never trigger another full reindex (no reindex storm)."""
        assert reindex_reason(KEYWORD_ONLY, KEYWORD_ONLY) is None


class TestSessionChunking:
    def test_changed_transcript_chunking_rebuilds(self) -> None:
        assert reindex_reason(META, replace(META, session_chunk_tokens=300)) == "chunking_changed"
        assert reindex_reason(META, replace(META, session_chunk_overlap=0)) == "chunking_changed"


class TestVectorLabel:
    def test_the_same_model_name_at_another_provider_gets_another_label(self) -> None:
        local = vector_label("multilingual-e5-small", "a" * 64)
        ollama = vector_label("multilingual-e5-small", "b" * 64)

        assert local != ollama

    def test_the_same_provider_configuration_keeps_its_label(self) -> None:
        assert vector_label("m", "k" * 64) == vector_label("m", "k" * 64)


class TestRedactionRecorded:
    def test_it_survives_the_stored_json(self) -> None:
        meta = replace(META, redaction="abc")
        assert index_meta_from_json(index_meta_to_json(meta)) == meta

    def test_an_index_from_before_it_was_recorded_is_rebuilt_once(self) -> None:
        wanted = replace(META, redaction="abc")
        legacy = json.loads(index_meta_to_json(wanted))
        del legacy["redaction"]

        stored = index_meta_from_json(json.dumps(legacy))

        assert reindex_reason(stored, wanted) == "redaction_changed"
        assert reindex_reason(wanted, wanted) is None
