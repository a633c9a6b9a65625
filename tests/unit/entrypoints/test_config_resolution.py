"""Unit tests: resolving the config tree into MemorySettings: defaults, per-agent overrides,
sources, provider and model, secrets, transcript chunking."""

from __future__ import annotations

import pytest

from memlane.domain.config import MemorySettings, SecretRef
from memlane.entrypoints.config.runtime import (
    resolve_settings,
)
from tests.unit.entrypoints.config_trees import config_error, tree


class TestDefaults:
    def test_an_empty_config_gives_the_built_in_defaults(self) -> None:
        settings = resolve_settings({})

        assert settings == MemorySettings()

    def test_default_sources_are_memory_and_sessions(self) -> None:
        assert resolve_settings({}).sources == ("memory", "sessions")

    def test_default_cache_is_bounded(self) -> None:
        assert resolve_settings({}).cache.max_entries == 100_000

    def test_citations_come_from_the_top_level_memory_block(self) -> None:
        settings = resolve_settings({"memory": {"citations": "off", "backend": "builtin"}})

        assert settings.citations == "off"


class TestPerAgentOverrides:
    def test_an_agent_override_wins_key_by_key_over_the_defaults(self) -> None:
        root = tree(
            {"provider": "openai", "query": {"maxResults": 9, "minScore": 0.5}},
            {"id": "main", "memorySearch": {"query": {"maxResults": 3}}},
        )

        settings = resolve_settings(root, "main")

        assert settings.provider == "openai"
        assert settings.query.max_results == 3
        assert settings.query.min_score == 0.5

    def test_nested_objects_are_merged_key_by_key(self) -> None:
        root = tree(
            {"query": {"hybrid": {"mmr": {"enabled": True}}}},
            {"id": "main", "memorySearch": {"query": {"hybrid": {"mmr": {"lambda": 0.2}}}}},
        )

        mmr = resolve_settings(root).query.hybrid.mmr

        assert mmr.enabled is True
        assert mmr.lambda_ == 0.2

    def test_other_agents_get_only_the_defaults(self) -> None:
        root = tree(
            {"provider": "voyage"},
            {"id": "main", "memorySearch": {"provider": "local"}},
            {"id": "work"},
        )

        assert resolve_settings(root, "main").provider == "local"
        assert resolve_settings(root, "work").provider == "voyage"

    def test_extra_paths_are_concatenated_trimmed_and_deduplicated(self) -> None:
        root = tree(
            {"extraPaths": [" notes ", "shared", ""]},
            {"id": "main", "memorySearch": {"extraPaths": ["shared", "team/wiki", "  "]}},
        )

        assert resolve_settings(root).extra_paths == ("notes", "shared", "team/wiki")

    def test_remote_headers_are_taken_whole_from_the_agent_level(self) -> None:
        root = tree(
            {"remote": {"headers": {"X-A": "1", "X-B": "2"}}},
            {"id": "main", "memorySearch": {"remote": {"headers": {"X-C": "3"}}}},
        )

        assert resolve_settings(root).remote.headers == (("X-C", "3"),)

    def test_remote_headers_come_from_the_defaults_when_the_agent_sets_none(self) -> None:
        root = tree({"remote": {"headers": {"X-A": "1"}}}, {"id": "main"})

        assert resolve_settings(root).remote.headers == (("X-A", "1"),)

    def test_null_counts_as_unset(self) -> None:
        root = tree(
            {"provider": "gemini", "query": {"maxResults": 8}},
            {"id": "main", "memorySearch": {"provider": None, "query": {"maxResults": None}}},
        )

        settings = resolve_settings(root)

        assert settings.provider == "gemini"
        assert settings.query.max_results == 8

    def test_other_agents_blocks_are_validated_too(self) -> None:
        root = tree({}, {"id": "main"}, {"id": "work", "memorySearch": {"provder": "local"}})

        error = config_error(root, "main")

        assert error.key == "agents.list[1].memorySearch.provder"


class TestSources:
    @pytest.mark.parametrize(
        ("configured", "expected"),
        [
            (["memory"], ("memory",)),
            (["sessions"], ("sessions",)),
            (["sessions", "memory", "sessions"], ("sessions", "memory")),
            ([], ("memory",)),
        ],
    )
    def test_configured_sources_are_kept_deduplicated(
        self, configured: list[str], expected: tuple[str, ...]
    ) -> None:
        assert resolve_settings(tree({"sources": configured})).sources == expected

    def test_sessions_do_not_need_the_experimental_flag(self) -> None:
        root = tree({"sources": ["memory", "sessions"], "experimental": {"sessionMemory": False}})

        assert resolve_settings(root).sources == ("memory", "sessions")

    def test_an_unknown_source_names_its_list_position(self) -> None:
        error = config_error(tree({"sources": ["memory", "email"]}))

        assert error.key == "agents.defaults.memorySearch.sources[1]"


class TestProviderAndModel:
    @pytest.mark.parametrize(
        ("provider", "model"),
        [
            ("openai", "text-embedding-3-small"),
            ("gemini", "gemini-embedding-001"),
            ("voyage", "voyage-4-large"),
            ("mistral", "mistral-embed"),
            ("ollama", "nomic-embed-text"),
            ("local", "multilingual-e5-small"),
            ("auto", ""),
            ("none", ""),
        ],
    )
    def test_an_unset_model_is_the_providers_default(self, provider: str, model: str) -> None:
        assert resolve_settings(tree({"provider": provider})).model == model

    def test_an_explicit_model_wins(self) -> None:
        settings = resolve_settings(tree({"provider": "openai", "model": "text-embedding-3-large"}))

        assert settings.model == "text-embedding-3-large"

    def test_none_is_the_explicit_keyword_only_provider(self) -> None:
        assert resolve_settings(tree({"provider": "none"})).provider == "none"

    def test_an_unknown_provider_is_an_error_listing_the_choices(self) -> None:
        error = config_error(tree({"provider": "cohere"}))

        assert error.key == "agents.defaults.memorySearch.provider"
        assert "'openai'" in str(error)

    def test_fallback_is_resolved(self) -> None:
        assert resolve_settings(tree({"fallback": "local"})).fallback == "local"

    def test_output_dimensionality_is_a_positive_integer(self) -> None:
        assert resolve_settings(tree({"outputDimensionality": 768.9})).output_dimensionality == 768


class TestSecrets:
    def test_a_literal_api_key_is_kept(self) -> None:
        remote = resolve_settings(tree({"remote": {"apiKey": "sk-test"}})).remote

        assert remote.api_key == "sk-test"
        assert remote.api_key_ref is None

    def test_an_env_secret_ref_is_kept_for_the_entry_points(self) -> None:
        ref = {"source": "env", "provider": "default", "id": "OPENAI_API_KEY"}

        remote = resolve_settings(tree({"remote": {"apiKey": ref}})).remote

        assert remote.api_key is None
        assert remote.api_key_ref == SecretRef("env", "OPENAI_API_KEY", "default")

    def test_the_api_key_never_appears_in_repr(self) -> None:
        settings = resolve_settings(tree({"remote": {"apiKey": "sk-very-secret"}}))

        assert "sk-very-secret" not in repr(settings)

    @pytest.mark.parametrize(
        ("ref", "key"),
        [
            ({"source": "file", "id": "/run/key"}, "remote.apiKey.source"),
            ({"source": "env"}, "remote.apiKey.id"),
            ({"source": "env", "id": "K", "extra": 1}, "remote.apiKey.extra"),
            (42, "remote.apiKey"),
        ],
    )
    def test_unsupported_secret_refs_are_errors(self, ref: object, key: str) -> None:
        error = config_error(tree({"remote": {"apiKey": ref}}))

        assert error.key == f"agents.defaults.memorySearch.{key}"


class TestSessionChunking:
    def test_transcripts_default_to_smaller_chunks(self) -> None:
        settings = resolve_settings({})

        assert (settings.session_chunking.tokens, settings.session_chunking.overlap) == (150, 30)
        assert (settings.chunking.tokens, settings.chunking.overlap) == (400, 80)

    def test_transcript_chunking_is_configurable_and_overlap_clamped(self) -> None:
        settings = resolve_settings(tree({"chunking": {"sessionTokens": 60, "sessionOverlap": 90}}))

        assert (settings.session_chunking.tokens, settings.session_chunking.overlap) == (60, 59)
