"""Unit tests: validating the config tree: wrong keys and types named by their full path, the
whole spec table accepted, keys outside memlane's blocks tolerated and near misses reported."""

from __future__ import annotations

import math

import pytest

from memlane.domain.config import MemorySettings
from memlane.domain.errors import ConfigError
from memlane.entrypoints.config.runtime import (
    ignored_keys,
    ignored_settings,
    resolve_settings,
)
from tests.unit.entrypoints.config_trees import config_error, tree


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
