"""Unit tests: resolving the config tree into MemorySettings."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlane.domain.config import MemorySettings, SecretRef, candidate_limit
from memlane.domain.errors import ConfigError
from memlane.entrypoints.config.resolve import (
    default_agent_id,
    ignored_keys,
    ignored_settings,
    resolve_settings,
    resolve_workspace,
    validate_agent_id,
)


def tree(
    defaults: dict[str, object] | None = None, *entries: dict[str, object]
) -> dict[str, object]:
    """A config tree with `defaults` as agents.defaults.memorySearch and the given agent entries."""
    agents: dict[str, object] = {"defaults": {"memorySearch": defaults or {}}}
    if entries:
        agents["list"] = list(entries)
    return {"agents": agents}


def nested(dotted: str, value: object) -> dict[str, object]:
    """`nested("query.maxResults", 3)` -> `{"query": {"maxResults": 3}}`."""
    node: dict[str, object] = {}
    *parents, leaf = dotted.split(".")
    current = node
    for part in parents:
        child: dict[str, object] = {}
        current[part] = child
        current = child
    current[leaf] = value
    return node


def config_error(root: dict[str, object], agent: str | None = None) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        resolve_settings(root, agent)
    return caught.value


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


def _get(path: str) -> Callable[[MemorySettings], object]:
    def read(settings: MemorySettings) -> object:
        value: object = settings
        for part in path.split("."):
            value = getattr(value, part)
        return value

    return read


class TestClamps:
    @pytest.mark.parametrize(
        ("key", "value", "field", "expected"),
        [
            ("chunking.tokens", 0, "chunking.tokens", 1),
            ("chunking.tokens", 250.7, "chunking.tokens", 250),
            ("chunking.overlap", -5, "chunking.overlap", 0),
            ("query.maxResults", 0, "query.max_results", 1),
            ("query.maxResults", -3, "query.max_results", 1),
            ("query.maxResults", 1000, "query.max_results", 100),
            ("query.maxResults", 3.9, "query.max_results", 3),
            ("query.minScore", -1, "query.min_score", 0.0),
            ("query.minScore", 2, "query.min_score", 1.0),
            ("query.relevanceFloor", -1, "query.relevance_floor", 0.0),
            ("query.relevanceFloor", 1.5, "query.relevance_floor", 1.0),
            ("query.relevanceTermShare", -1, "query.relevance_term_share", 0.0),
            ("query.relevanceTermShare", 2, "query.relevance_term_share", 1.0),
            ("query.relevanceKeywordTermShare", -1, "query.relevance_keyword_term_share", 0.0),
            ("query.relevanceKeywordTermShare", 2, "query.relevance_keyword_term_share", 1.0),
            ("query.hybrid.candidateMultiplier", 50, "query.hybrid.candidate_multiplier", 20),
            ("query.hybrid.candidateMultiplier", 0, "query.hybrid.candidate_multiplier", 1),
            ("query.hybrid.minCandidates", 0, "query.hybrid.min_candidates", 1),
            ("query.hybrid.minCandidates", 5000, "query.hybrid.min_candidates", 1000),
            ("query.hybrid.rrfK", 0, "query.hybrid.rrf_k", 1),
            ("query.hybrid.mmr.lambda", 5, "query.hybrid.mmr.lambda_", 1.0),
            (
                "query.hybrid.temporalDecay.halfLifeDays",
                0.5,
                "query.hybrid.temporal_decay.half_life_days",
                1,
            ),
            ("cache.maxEntries", 0, "cache.max_entries", 1),
            ("remote.batch.concurrency", 0, "remote.batch.concurrency", 1),
            ("sync.sessions.deltaBytes", -1, "sync.sessions.delta_bytes", 0),
            ("sync.sessions.deltaMessages", 12.6, "sync.sessions.delta_messages", 12),
            ("sync.watchDebounceMs", -10, "sync.watch_debounce_ms", 0),
            ("sync.firstSearchWaitMs", 10**9, "sync.first_search_wait_ms", 600_000),
            ("remote.maxConcurrency", 0, "remote.max_concurrency", 1),
        ],
    )
    def test_out_of_range_numbers_are_clamped_not_rejected(
        self, key: str, value: float, field: str, expected: float
    ) -> None:
        settings = resolve_settings(tree(nested(key, value)))

        assert _get(field)(settings) == expected

    def test_overlap_stays_below_the_token_budget(self) -> None:
        chunking = resolve_settings(tree({"chunking": {"tokens": 50, "overlap": 80}})).chunking

        assert (chunking.tokens, chunking.overlap) == (50, 49)

    def test_overlap_is_zero_for_a_one_token_budget(self) -> None:
        chunking = resolve_settings(tree({"chunking": {"tokens": 1, "overlap": 5}})).chunking

        assert chunking.overlap == 0

    @pytest.mark.parametrize(
        ("vector", "text", "expected"),
        [(1, 1, (0.5, 0.5)), (0, 0, (0.5, 0.5)), (2, 0, (1.0, 0.0)), (0.6, 0.2, (0.75, 0.25))],
    )
    def test_hybrid_weights_are_clamped_then_normalised(
        self, vector: float, text: float, expected: tuple[float, float]
    ) -> None:
        hybrid = resolve_settings(
            tree({"query": {"hybrid": {"vectorWeight": vector, "textWeight": text}}})
        ).query.hybrid

        assert hybrid.vector_weight == pytest.approx(expected[0])
        assert hybrid.text_weight == pytest.approx(expected[1])

    @pytest.mark.parametrize(
        ("fusion", "expected"),
        [(None, (0.5, 0.5)), ("zscore", (0.5, 0.5)), ("weighted", (0.7, 0.3)), ("rrf", (0.7, 0.3))],
    )
    def test_unset_weights_default_per_fusion(
        self, fusion: str | None, expected: tuple[float, float]
    ) -> None:
        hybrid_tree = {} if fusion is None else {"fusion": fusion}
        hybrid = resolve_settings(tree({"query": {"hybrid": hybrid_tree}})).query.hybrid

        assert hybrid.fusion == (fusion or "zscore")
        assert (hybrid.vector_weight, hybrid.text_weight) == pytest.approx(expected)

    def test_one_weight_set_takes_the_other_from_the_fusion_default(self) -> None:
        hybrid = resolve_settings(
            tree({"query": {"hybrid": {"fusion": "weighted", "vectorWeight": 0.6}}})
        ).query.hybrid

        assert (hybrid.vector_weight, hybrid.text_weight) == pytest.approx((0.6 / 0.9, 0.3 / 0.9))

    def test_weights_from_two_levels_are_normalised_together(self) -> None:
        root = tree(
            {"query": {"hybrid": {"vectorWeight": 0.3}}},
            {"id": "main", "memorySearch": {"query": {"hybrid": {"textWeight": 0.1}}}},
        )

        hybrid = resolve_settings(root).query.hybrid

        assert hybrid.vector_weight == pytest.approx(0.75)

    def test_fusion_can_be_reciprocal_rank(self) -> None:
        hybrid = resolve_settings(tree({"query": {"hybrid": {"fusion": "rrf", "rrfK": 30}}}))

        assert (hybrid.query.hybrid.fusion, hybrid.query.hybrid.rrf_k) == ("rrf", 30)

    def test_relevance_floor_is_unset_by_default_and_read_when_given(self) -> None:
        assert resolve_settings(tree()).query.relevance_floor is None
        configured = resolve_settings(tree({"query": {"relevanceFloor": 0.6}}))
        assert configured.query.relevance_floor == pytest.approx(0.6)

    def test_the_word_share_is_unset_by_default_and_read_when_given(self) -> None:
        assert resolve_settings(tree()).query.relevance_term_share is None
        configured = resolve_settings(tree({"query": {"relevanceTermShare": 0.3}}))
        assert configured.query.relevance_term_share == pytest.approx(0.3)
        assert resolve_settings(tree()).query.relevance_keyword_term_share is None
        keyword = resolve_settings(tree({"query": {"relevanceKeywordTermShare": 0.5}}))
        assert keyword.query.relevance_keyword_term_share == pytest.approx(0.5)

    @given(st.floats(allow_nan=False, allow_infinity=False))
    def test_min_score_always_lands_in_the_unit_interval(self, value: float) -> None:
        score = resolve_settings(tree({"query": {"minScore": value}})).query.min_score

        assert 0.0 <= score <= 1.0

    @given(st.integers(min_value=-(2**60), max_value=2**60))
    def test_max_results_always_lands_in_one_to_a_hundred(self, value: int) -> None:
        assert (
            1 <= resolve_settings(tree({"query": {"maxResults": value}})).query.max_results <= 100
        )


class TestCandidateLimit:
    def test_the_pool_is_max_results_times_the_multiplier(self) -> None:
        settings = resolve_settings(
            tree({"query": {"maxResults": 30, "hybrid": {"candidateMultiplier": 10}}})
        )

        assert candidate_limit(settings.query.hybrid, 30, fused=True) == 300

    def test_a_fused_search_fetches_at_least_min_candidates(self) -> None:
        hybrid = resolve_settings(tree({})).query.hybrid

        assert hybrid.min_candidates == 200
        assert candidate_limit(hybrid, 6, fused=True) == 200

    def test_a_single_leg_fetches_only_what_it_returns_times_the_multiplier(self) -> None:
        hybrid = resolve_settings(tree({})).query.hybrid

        assert candidate_limit(hybrid, 6, fused=False) == 24

    def test_min_candidates_is_configurable(self) -> None:
        hybrid = resolve_settings(tree({"query": {"hybrid": {"minCandidates": 50}}})).query.hybrid

        assert candidate_limit(hybrid, 6, fused=True) == 50
        assert candidate_limit(hybrid, 20, fused=True) == 80

    def test_the_pool_is_capped_at_a_thousand(self) -> None:
        settings = resolve_settings(
            tree({"query": {"maxResults": 100, "hybrid": {"candidateMultiplier": 20}}})
        )

        assert candidate_limit(settings.query.hybrid, 100, fused=True) == 1000


class TestValidation:
    def test_an_unknown_key_is_named_by_its_full_path_with_a_suggestion(self) -> None:
        error = config_error(tree({"query": {"hybrid": {"vectorWieght": 0.5}}}))

        assert error.key == "agents.defaults.memorySearch.query.hybrid.vectorWieght"
        assert "vectorWeight" in str(error)

    @pytest.mark.parametrize(
        "value", ["0.5", "abc", True, float("nan"), math.inf, -math.inf, [0.5], {"x": 1}]
    )
    def test_a_non_number_where_a_number_is_expected_is_an_error(self, value: object) -> None:
        error = config_error(tree({"query": {"hybrid": {"vectorWeight": value}}}))

        assert error.key == "agents.defaults.memorySearch.query.hybrid.vectorWeight"

    @pytest.mark.parametrize("value", [1, "true", "yes", [True]])
    def test_a_non_boolean_where_a_boolean_is_expected_is_an_error(self, value: object) -> None:
        error = config_error(tree({"sync": {"watch": value}}))

        assert error.key == "agents.defaults.memorySearch.sync.watch"

    def test_an_agent_override_error_names_the_agent_entry(self) -> None:
        root = tree(
            {}, {"id": "main"}, {"id": "work", "memorySearch": {"chunking": {"tokens": "x"}}}
        )

        error = config_error(root, "work")

        assert error.key == "agents.list[1].memorySearch.chunking.tokens"

    def test_a_section_that_is_not_an_object_is_an_error(self) -> None:
        error = config_error(tree({"query": 5}))

        assert error.key == "agents.defaults.memorySearch.query"

    def test_a_non_string_list_item_names_its_index(self) -> None:
        error = config_error(tree({"extraPaths": ["ok", 3]}))

        assert error.key == "agents.defaults.memorySearch.extraPaths[1]"

    def test_header_values_must_be_strings(self) -> None:
        error = config_error(tree({"remote": {"headers": {"X-Retries": 3}}}))

        assert error.key == "agents.defaults.memorySearch.remote.headers.X-Retries"

    def test_an_invalid_redaction_pattern_is_an_error(self) -> None:
        error = config_error(tree({"redaction": {"extraPatterns": [r"ok-\d+", "(unclosed"]}}))

        assert error.key == "agents.defaults.memorySearch.redaction.extraPatterns[1]"

    def test_valid_redaction_settings_are_kept(self) -> None:
        redaction = resolve_settings(
            tree({"redaction": {"enabled": False, "extraPatterns": [r"acme-[0-9a-f]{32}"]}})
        ).redaction

        assert redaction.enabled is False
        assert redaction.extra_patterns == (r"acme-[0-9a-f]{32}",)

    def test_only_the_sqlite_and_postgres_store_drivers_exist(self) -> None:
        error = config_error(tree({"store": {"driver": "mysql"}}))

        assert error.key == "agents.defaults.memorySearch.store.driver"
        assert resolve_settings(tree({"store": {"driver": "postgres"}})).store.driver == "postgres"

    def test_disabled_multimodal_is_accepted(self) -> None:
        root = tree({"multimodal": {"enabled": False, "modalities": ["image"], "maxFileBytes": 10}})

        assert resolve_settings(root).enabled is True

    def test_enabled_multimodal_starts_and_is_reported_as_ignored(self) -> None:
        root = tree({}, {"id": "main", "memorySearch": {"multimodal": {"enabled": True}}})

        assert resolve_settings(root).enabled is True
        assert [i.key for i in ignored_settings(root)] == [
            "agents.list[0].memorySearch.multimodal.enabled"
        ]

    def test_the_qmd_backend_starts_builtin_and_is_reported(self) -> None:
        root = {"memory": {"backend": "qmd", "qmd": {"paths": []}}}

        assert resolve_settings(root) == MemorySettings()
        (found,) = ignored_settings(root)
        assert found.key == "memory.backend"
        assert "QMD" in found.reason

    def test_an_unknown_key_in_the_memory_block_is_an_error(self) -> None:
        error = config_error({"memory": {"citation": "on"}})

        assert error.key == "memory.citation"

    def test_a_root_that_is_not_an_object_is_an_error(self) -> None:
        with pytest.raises(ConfigError):
            resolve_settings([])  # type: ignore[arg-type]

    def test_the_whole_spec_table_is_accepted(self) -> None:
        block: dict[str, object] = {
            "enabled": True,
            "sources": ["memory", "sessions"],
            "experimental": {"sessionMemory": True},
            "extraPaths": ["../shared"],
            "multimodal": {"enabled": False, "modalities": ["all"], "maxFileBytes": 10485760},
            "provider": "gemini",
            "model": "gemini-embedding-001",
            "outputDimensionality": 768,
            "fallback": "local",
            "remote": {
                "baseUrl": "https://example.invalid/v1",
                "apiKey": "k",
                "headers": {"X-Team": "memory"},
                "batch": {
                    "enabled": True,
                    "wait": False,
                    "concurrency": 3,
                    "pollIntervalMs": 5000,
                    "timeoutMinutes": 30,
                },
                "timeoutSeconds": 90,
                "queryTimeoutSeconds": 15,
                "maxConcurrency": 8,
            },
            "local": {"modelPath": "~/models/e5.gguf", "modelCacheDir": "~/cache", "threads": 2},
            "store": {
                "driver": "sqlite",
                "path": "~/.memlane/{agentId}.db",
                "vector": {"enabled": False, "extensionPath": "/opt/vec0.so"},
            },
            "chunking": {"tokens": 300, "overlap": 40},
            "sync": {
                "onSessionStart": False,
                "onSearch": False,
                "watch": False,
                "watchDebounceMs": 500,
                "intervalMinutes": 15,
                "firstSearchWaitMs": 1000,
                "sessions": {"deltaBytes": 10, "deltaMessages": 2, "postCompactionForce": False},
            },
            "query": {
                "maxResults": 10,
                "minScore": 0.2,
                "hybrid": {
                    "enabled": False,
                    "vectorWeight": 0.6,
                    "textWeight": 0.4,
                    "candidateMultiplier": 6,
                    "fusion": "rrf",
                    "rrfK": 40,
                    "mmr": {"enabled": True, "lambda": 0.5},
                    "temporalDecay": {"enabled": True, "halfLifeDays": 14},
                },
            },
            "cache": {"enabled": False, "maxEntries": 500},
            "redaction": {"enabled": True, "extraPatterns": ["x{3}"]},
            "sessions": {"dir": "/var/sessions"},
        }

        s = resolve_settings(tree(block))

        assert (s.provider, s.model, s.output_dimensionality, s.fallback) == (
            "gemini", "gemini-embedding-001", 768, "local",
        )  # fmt: skip
        assert s.remote.base_url == "https://example.invalid/v1"
        assert s.remote.batch.enabled is True
        assert s.remote.batch.wait is False
        assert (s.remote.batch.concurrency, s.remote.batch.poll_interval_ms) == (3, 5000)
        assert s.remote.batch.timeout_minutes == 30
        assert (s.remote.timeout_seconds, s.remote.query_timeout_seconds) == (90.0, 15.0)
        assert s.remote.max_concurrency == 8
        assert (s.local.model_path, s.local.threads) == ("~/models/e5.gguf", 2)
        assert s.store.path == "~/.memlane/{agentId}.db"
        assert s.store.vector_enabled is False
        assert (s.chunking.tokens, s.chunking.overlap) == (300, 40)
        assert (s.sync.on_session_start, s.sync.on_search, s.sync.watch) == (False, False, False)
        assert (s.sync.watch_debounce_ms, s.sync.interval_minutes) == (500, 15)
        assert s.sync.first_search_wait_ms == 1000
        assert (s.sync.sessions.delta_bytes, s.sync.sessions.delta_messages) == (10, 2)
        assert (s.query.max_results, s.query.min_score) == (10, 0.2)
        assert s.query.hybrid.enabled is False
        assert s.query.hybrid.candidate_multiplier == 6
        assert s.query.hybrid.mmr.enabled is True
        assert s.query.hybrid.mmr.lambda_ == 0.5
        assert s.query.hybrid.temporal_decay.enabled is True
        assert s.query.hybrid.temporal_decay.half_life_days == 14
        assert (s.cache.enabled, s.cache.max_entries) == (False, 500)
        assert s.sessions_dir == "/var/sessions"
        assert s.extra_paths == ("../shared",)


class TestAgents:
    def test_without_a_list_there_is_one_main_agent(self) -> None:
        assert default_agent_id({}) == "main"

    def test_the_default_agent_is_the_flagged_one_else_the_first(self) -> None:
        assert default_agent_id(tree({}, {"id": "a"}, {"id": "b", "default": True})) == "b"
        assert default_agent_id(tree({}, {"id": "a"}, {"id": "b"})) == "a"

    def test_without_an_agent_id_the_default_agents_override_applies(self) -> None:
        root = tree(
            {}, {"id": "a"}, {"id": "b", "default": True, "memorySearch": {"provider": "local"}}
        )

        assert resolve_settings(root).provider == "local"

    def test_an_agent_missing_from_a_non_empty_list_is_an_error(self) -> None:
        error = config_error(tree({}, {"id": "main"}), "mian")

        assert error.key == "agents.list"
        assert "main" in str(error)

    def test_any_agent_id_is_accepted_when_no_list_is_configured(self) -> None:
        assert resolve_settings({}, "scratch") == MemorySettings()

    @pytest.mark.parametrize("agent", ["../etc", "a/b", "", ".hidden", "x" * 65])
    def test_unsafe_agent_ids_are_rejected(self, agent: str) -> None:
        with pytest.raises(ConfigError):
            validate_agent_id(agent)
        with pytest.raises(ConfigError):
            resolve_settings({}, agent)

    def test_duplicate_ids_are_an_error(self) -> None:
        error = config_error(tree({}, {"id": "a"}, {"id": "a"}))

        assert error.key == "agents.list[1].id"

    def test_an_entry_without_an_id_is_an_error(self) -> None:
        error = config_error(tree({}, {"workspace": "/w"}))

        assert error.key == "agents.list[0].id"


class TestWorkspace:
    def test_an_agents_own_workspace_wins(self) -> None:
        root = {
            "agents": {"defaults": {"workspace": "/d"}, "list": [{"id": "a", "workspace": "/a"}]}
        }

        assert resolve_workspace(root, "a") == "/a"

    def test_the_default_workspace_applies_to_the_default_agent_only(self) -> None:
        root = {"agents": {"defaults": {"workspace": "/d"}, "list": [{"id": "a"}, {"id": "b"}]}}

        assert resolve_workspace(root, "a") == "/d"
        assert resolve_workspace(root, "b") is None
        assert resolve_workspace(root) == "/d"

    def test_no_configured_workspace_is_none(self) -> None:
        assert resolve_workspace({}) is None

    def test_a_non_string_workspace_is_an_error(self) -> None:
        with pytest.raises(ConfigError) as caught:
            resolve_workspace({"agents": {"defaults": {"workspace": 3}}})

        assert caught.value.key == "agents.defaults.workspace"


class TestIgnoredKeys:
    def test_keys_of_the_host_systems_config_are_tolerated_and_listed(self) -> None:
        root = {
            "gateway": {"port": 1},
            "agents": {
                "defaults": {"model": "x", "memorySearch": {}},
                "list": [{"id": "main", "identity": {}}],
            },
            "memory": {"qmd": {"paths": []}},
        }

        assert resolve_settings(root) == MemorySettings()
        assert ignored_keys(root) == [
            "gateway",
            "agents.defaults.model",
            "agents.list[0].identity",
            "memory.qmd",
        ]


class TestNearMisses:
    """#30.4: a key outside memlane's blocks that looks like one it reads is reported."""

    @pytest.mark.parametrize(
        ("root", "key", "meant"),
        [
            ({"agent": {"defaults": {}}}, "agent", "agents"),
            ({"memorySearch": {}}, "memorySearch", "agents.defaults.memorySearch"),
            ({"agents": {"defualts": {}}}, "agents.defualts", "agents.defaults"),
            (
                {"agents": {"defaults": {"memorySerach": {"provider": "none"}}}},
                "agents.defaults.memorySerach",
                "agents.defaults.memorySearch",
            ),
            (
                {"agents": {"list": [{"id": "a", "workspce": "/w"}]}},
                "agents.list[0].workspce",
                "agents.list[0].workspace",
            ),
        ],
    )
    def test_a_near_miss_names_the_key_meant(
        self, root: dict[str, object], key: str, meant: str
    ) -> None:
        found = [k for k in ignored_settings(root) if k.key == key]

        assert len(found) == 1 and f"did you mean {meant!r}?" in found[0].reason

    def test_the_reference_systems_own_keys_are_not_near_misses(self) -> None:
        root: dict[str, object] = {
            key: {}
            for key in (
                "meta", "env", "wizard", "diagnostics", "logging", "update", "browser", "ui",
                "auth", "models", "agents", "tools", "bindings", "broadcast", "audio", "media",
                "messages", "commands", "approvals", "session", "cron", "hooks", "web",
                "channels", "discovery", "canvasHost", "talk", "gateway", "memory", "skills",
                "plugins",
            )
        }  # fmt: skip
        root["agents"] = {
            "defaults": dict.fromkeys(("model", "models", "repoRoot", "heartbeat", "sandbox")),
            "list": [{"id": "main", "name": "M", "agentDir": "/a", "identity": {}, "tools": {}}],
        }

        assert ignored_settings(root) == []


class TestSessionChunking:
    def test_transcripts_default_to_smaller_chunks(self) -> None:
        settings = resolve_settings({})

        assert (settings.session_chunking.tokens, settings.session_chunking.overlap) == (150, 30)
        assert (settings.chunking.tokens, settings.chunking.overlap) == (400, 80)

    def test_transcript_chunking_is_configurable_and_overlap_clamped(self) -> None:
        settings = resolve_settings(tree({"chunking": {"sessionTokens": 60, "sessionOverlap": 90}}))

        assert (settings.session_chunking.tokens, settings.session_chunking.overlap) == (60, 59)
