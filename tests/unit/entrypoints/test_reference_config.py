"""Unit tests: reading the reference system's config as it is written (issue 15, items 2-5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memlane.domain.config import SecretRef
from memlane.domain.errors import ConfigError
from memlane.entrypoints.config.read import (
    ConfigFileError,
    config_path,
    env_with_block,
    load_config,
    substitute,
)
from memlane.entrypoints.config.running.credentials import (
    api_key_for,
    base_url_for,
    headers_for,
    key_optional,
)
from memlane.entrypoints.config.runtime import (
    RuntimeConfig,
    ignored_settings,
    resolve_runtime,
    resolve_settings,
)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def block(**memory_search: object) -> dict[str, object]:
    return {"agents": {"defaults": {"memorySearch": memory_search}}}


class TestSubstitution:
    def test_a_variable_in_a_memory_key_is_replaced(self) -> None:
        tree = block(remote={"headers": {"Authorization": "Bearer ${PROXY_EMBED_KEY}"}})

        done = substitute(tree, {"PROXY_EMBED_KEY": "k1"})

        assert resolve_settings(done).remote.headers == (("Authorization", "Bearer k1"),)  # type: ignore[arg-type]

    def test_an_unset_variable_in_a_memory_key_is_an_error_naming_the_key(self) -> None:
        with pytest.raises(ConfigError) as caught:
            substitute(block(model="${EMBED_MODEL}"), {})

        assert caught.value.key == "agents.defaults.memorySearch.model"
        assert "EMBED_MODEL" in str(caught.value)

    def test_an_unset_variable_of_the_gateway_is_left_alone(self) -> None:
        tree = {"channels": {"telegram": {"botToken": "${TELEGRAM_BOT_TOKEN}"}}}

        assert substitute(tree, {}) == tree

    def test_a_doubled_dollar_writes_the_text_itself(self) -> None:
        assert substitute(block(model="$${NAME}"), {"NAME": "x"}) == block(model="${NAME}")

    def test_lowercase_names_are_not_variables(self) -> None:
        assert substitute(block(model="${name}"), {}) == block(model="${name}")


class TestEnvBlock:
    def test_the_block_gives_defaults_and_the_process_wins(self) -> None:
        tree = {"env": {"vars": {"A": "from-vars"}, "B": "inline", "C": "block", "shellEnv": {}}}

        env = env_with_block(tree, {"C": "process"})

        assert (env["A"], env["B"], env["C"]) == ("from-vars", "inline", "process")

    def test_the_block_feeds_substitution_in_the_file(self, tmp_path: Path) -> None:
        file = write(
            tmp_path / "c.json5",
            '{env: {vars: {KEY: "s3cret"}}, agents: {defaults: {memorySearch: '
            '{remote: {apiKey: "${KEY}"}}}}}',
        )

        tree = load_config(str(file), {})

        assert resolve_settings(tree).remote.api_key == "s3cret"

    def test_a_non_object_block_is_an_error(self) -> None:
        with pytest.raises(ConfigError, match="env"):
            env_with_block({"env": "A=1"}, {})


class TestInclude:
    def test_included_files_merge_and_siblings_win(self, tmp_path: Path) -> None:
        write(
            tmp_path / "a.json5",
            '{agents: {defaults: {memorySearch: {model: "a", query: {maxResults: 3}}}}}',
        )
        write(tmp_path / "sub" / "b.json5", '{agents: {defaults: {memorySearch: {model: "b"}}}}')
        main = write(
            tmp_path / "main.json5",
            '{$include: ["a.json5", "sub/b.json5"], agents: {defaults: {memorySearch: '
            '{provider: "openai"}}}}',
        )

        settings = resolve_settings(load_config(str(main), {}))

        assert (settings.model, settings.query.max_results, settings.provider) == ("b", 3, "openai")

    def test_a_nested_include_is_relative_to_its_own_file(self, tmp_path: Path) -> None:
        write(tmp_path / "d" / "inner.json5", "{memory: {citations: 'off'}}")
        write(tmp_path / "d" / "outer.json5", "{$include: 'inner.json5'}")
        main = write(tmp_path / "main.json5", "{$include: 'd/outer.json5'}")

        assert resolve_settings(load_config(str(main), {})).citations == "off"

    def test_a_cycle_is_an_error(self, tmp_path: Path) -> None:
        write(tmp_path / "a.json5", "{$include: 'b.json5'}")
        write(tmp_path / "b.json5", "{$include: 'a.json5'}")

        with pytest.raises(ConfigError, match="cycle"):
            load_config(str(tmp_path / "a.json5"), {})

    def test_a_missing_include_names_the_file(self, tmp_path: Path) -> None:
        main = write(tmp_path / "main.json5", "{$include: 'gone.json5'}")

        with pytest.raises(ConfigFileError, match=r"gone\.json5"):
            load_config(str(main), {})


class TestModelsProviders:
    def test_the_host_entry_gives_key_url_and_headers_below_remote(self) -> None:
        tree = {
            "models": {"providers": {"openai": {
                "baseUrl": "https://proxy/v1", "apiKey": "k-host", "headers": {"X-Team": "a"},
            }}},
            **block(provider="openai", remote={"headers": {"X-Team": "b", "X-Run": "1"}}),
        }  # fmt: skip

        settings = resolve_settings(tree)

        assert api_key_for("openai", settings, {"OPENAI_API_KEY": "env"}) == "k-host"
        assert base_url_for("openai", settings, {}) == "https://proxy/v1"
        assert headers_for("openai", settings) == {"X-Team": "b", "X-Run": "1"}

    def test_gemini_reads_the_google_entry(self) -> None:
        tree = {"models": {"providers": {"google": {"apiKey": "g"}}}}

        assert api_key_for("gemini", resolve_settings(tree), {}) == "g"

    def test_an_unresolved_host_key_is_read_when_the_provider_is_used(self) -> None:
        tree = {"models": {"providers": {"openai": {"apiKey": "${LATER_KEY}"}}}}

        settings = resolve_settings(substitute(tree, {}))  # type: ignore[arg-type]

        assert settings.endpoint("openai") is not None
        assert settings.endpoint("openai").api_key_ref == SecretRef("env", "LATER_KEY")  # type: ignore[union-attr]
        assert api_key_for("openai", settings, {"LATER_KEY": "now"}) == "now"
        with pytest.raises(ConfigError, match="LATER_KEY"):
            api_key_for("openai", settings, {})


class TestProviderIds:
    def test_openai_compatible_needs_a_base_url_and_inherits_no_openai_key(self) -> None:
        settings = resolve_settings(
            block(provider="openai-compatible", remote={"baseUrl": "https://e.example/v1"})
        )

        assert (settings.provider, settings.provider_alias) == ("openai", "openai-compatible")
        assert api_key_for("openai", settings, {"OPENAI_API_KEY": "sk-real-openai"}) is None
        assert key_optional("openai", settings)

    def test_openai_compatible_without_a_url_is_an_error_naming_the_key(self) -> None:
        with pytest.raises(ConfigError) as caught:
            resolve_settings(block(provider="openai-compatible"))

        assert caught.value.key == "agents.defaults.memorySearch.provider"

    def test_lmstudio_defaults_to_its_local_server(self) -> None:
        settings = resolve_settings(block(provider="lmstudio"))

        assert base_url_for("openai", settings, {}) == "http://127.0.0.1:1234/v1"

    def test_a_custom_id_with_a_base_url_is_openai_compatible(self) -> None:
        tree = {
            "models": {"providers": {"vllm-box": {"baseUrl": "http://box:8000/v1", "apiKey": "x"}}},
            **block(provider="vllm-box"),
        }

        settings = resolve_settings(tree)

        assert settings.provider == "openai"
        assert (base_url_for("openai", settings, {}), api_key_for("openai", settings, {})) == (
            "http://box:8000/v1", "x",
        )  # fmt: skip

    def test_an_unknown_id_is_an_error_naming_the_key(self) -> None:
        with pytest.raises(ConfigError) as caught:
            resolve_settings(block(provider="bedrock"))

        assert caught.value.key == "agents.defaults.memorySearch.provider"


class TestMappedKeys:
    def test_input_types_default_to_input_type(self) -> None:
        remote = resolve_settings(block(inputType="passage", queryInputType="query")).remote

        assert (remote.query_input_type, remote.document_input_type) == ("query", "passage")

    def test_the_reference_names_are_aliases_and_memlane_names_win(self) -> None:
        alias = block(remote={"nonBatchConcurrency": 3}, sync={"embeddingBatchTimeoutSeconds": 90})
        both = block(
            remote={"nonBatchConcurrency": 3, "maxConcurrency": 5, "timeoutSeconds": 30},
            sync={"embeddingBatchTimeoutSeconds": 90},
        )

        assert (resolve_settings(alias).remote.max_concurrency,
                resolve_settings(alias).remote.timeout_seconds) == (3, 90.0)  # fmt: skip
        assert (resolve_settings(both).remote.max_concurrency,
                resolve_settings(both).remote.timeout_seconds) == (5, 30.0)  # fmt: skip

    @pytest.mark.parametrize(
        ("memory_search", "key"),
        [
            ({"local": {"contextSize": "auto"}}, "local.contextSize"),
            ({"local": {"modelCacheDir": "~/c"}}, "local.modelCacheDir"),
            ({"local": {"modelPath": "hf:org/m.gguf"}}, "local.modelPath"),
            ({"store": {"fts": {"tokenizer": "trigram"}}}, "store.fts.tokenizer"),
            ({"store": {"vector": {"extensionPath": "/x.so"}}}, "store.vector.extensionPath"),
            (
                {"sync": {"sessions": {"postCompactionForce": True}}},
                "sync.sessions.postCompactionForce",
            ),
            ({"multimodal": {"enabled": True}}, "multimodal.enabled"),
        ],
    )
    def test_unimplemented_keys_start_and_are_listed(
        self, memory_search: dict[str, object], key: str
    ) -> None:
        tree = block(**memory_search)

        resolve_settings(tree)
        assert [i.key for i in ignored_settings(tree)] == [f"agents.defaults.memorySearch.{key}"]

    def test_implemented_keys_are_not_listed(self) -> None:
        assert (
            ignored_settings(block(local={"modelPath": "/m.gguf"}, multimodal={"enabled": False}))
            == []
        )

    def test_an_invalid_value_of_an_ignored_key_is_still_an_error(self) -> None:
        with pytest.raises(ConfigError) as caught:
            resolve_settings(block(store={"fts": {"tokenizer": "porter"}}))

        assert caught.value.key == "agents.defaults.memorySearch.store.fts.tokenizer"


class TestGeminiDimensions:
    def test_an_unsupported_size_is_an_error_naming_the_key(self) -> None:
        tree = block(
            provider="gemini", model="gemini-embedding-2-preview", outputDimensionality=1024
        )

        with pytest.raises(ConfigError) as caught:
            resolve_settings(tree)

        assert caught.value.key == "agents.defaults.memorySearch.outputDimensionality"
        assert "768, 1536, 3072" in str(caught.value)

    def test_a_supported_size_and_a_prefixed_model_are_fine(self) -> None:
        tree = block(
            provider="gemini", model="models/gemini-embedding-2-preview", outputDimensionality=768
        )

        assert resolve_settings(tree).output_dimensionality == 768


class TestInstallation:
    def test_openclaw_state_dir_names_the_config_and_the_defaults(self, tmp_path: Path) -> None:
        state = tmp_path / "oc"
        write(state / "openclaw.json", '{agents: {list: [{id: "main"}, {id: "ops"}]}}')
        env = {"HOME": str(tmp_path), "OPENCLAW_STATE_DIR": str(state)}

        assert config_path(None, env) == (state / "openclaw.json", False)
        ops = resolve_runtime(env=env, cwd=tmp_path, agent_id="ops")

        assert ops.config_path == state / "openclaw.json"
        assert ops.workspace == state / "workspace-ops"
        assert ops.sessions_dir == state / "agents" / "ops" / "sessions"
        assert ops.store_path == tmp_path / ".memlane" / "agents" / "ops" / "memory.db"

    def test_a_profile_names_the_default_agents_workspace(self, tmp_path: Path) -> None:
        """The reference's `workspace-<profile>`: OPENCLAW_PROFILE was ignored unsaid, and the
        plain `workspace` indexed instead."""
        state = tmp_path / "oc"
        write(state / "openclaw.json", '{agents: {list: [{id: "main"}, {id: "ops"}]}}')
        env = {"HOME": str(tmp_path), "OPENCLAW_STATE_DIR": str(state), "OPENCLAW_PROFILE": "work"}

        main = resolve_runtime(env=env, cwd=tmp_path)
        ops = resolve_runtime(env=env, cwd=tmp_path, agent_id="ops")

        assert main.workspace == state / "workspace-work"
        assert ops.workspace == state / "workspace-ops"  # other agents: their own, as before

    @pytest.mark.parametrize("profile", ["../x", ".hidden", "a/b"])
    def test_a_profile_that_is_no_folder_name_is_refused(
        self, tmp_path: Path, profile: str
    ) -> None:
        state = tmp_path / "oc"
        write(state / "openclaw.json", "{}")
        env = {"HOME": str(tmp_path), "OPENCLAW_STATE_DIR": str(state), "OPENCLAW_PROFILE": profile}

        with pytest.raises(ConfigError, match=r"OPENCLAW_PROFILE: .* is not a profile name"):
            resolve_runtime(env=env, cwd=tmp_path)

    def test_a_memlane_config_wins_over_the_installation(self, tmp_path: Path) -> None:
        write(tmp_path / ".memlane" / "config.json5", "{}")
        write(tmp_path / "oc" / "openclaw.json", "{}")
        env = {"HOME": str(tmp_path), "OPENCLAW_STATE_DIR": str(tmp_path / "oc")}

        assert config_path(None, env) == (tmp_path / ".memlane" / "config.json5", False)

    def test_the_references_index_file_is_never_used(self, tmp_path: Path) -> None:
        config = write(
            tmp_path / "oc" / "openclaw.json",
            '{agents: {defaults: {memorySearch: {store: {path: "~/oc/memory/{agentId}.sqlite"}}}}}',
        )

        runtime = resolve_runtime(env={"HOME": str(tmp_path)}, cwd=tmp_path, config=str(config))

        assert runtime.store_path == tmp_path / ".memlane" / "agents" / "main" / "memory.db"
        assert [i.key for i in runtime.ignored] == ["memorySearch.store.path"]


class TestFallbackIds:
    """`fallback` takes the ids `provider` takes and resolves them the same way (issue 15)."""

    def test_lmstudio_is_an_openai_compatible_fallback_at_its_local_server(self) -> None:
        settings = resolve_settings(block(provider="gemini", fallback="lmstudio"))

        assert (settings.fallback, settings.fallback_id) == ("openai", "lmstudio")
        fallback = settings.fallback_settings()
        assert base_url_for("openai", fallback, {}) == "http://127.0.0.1:1234/v1"
        assert api_key_for("openai", fallback, {"OPENAI_API_KEY": "sk-real"}) is None
        assert key_optional("openai", fallback)

    def test_a_custom_id_with_a_base_url_is_a_fallback_with_its_own_key(self) -> None:
        tree = {
            "models": {"providers": {"lab-box": {"baseUrl": "http://box:8000/v1", "apiKey": "x"}}},
            **block(provider="gemini", fallback="lab-box"),
        }

        fallback = resolve_settings(tree).fallback_settings()

        assert (fallback.provider, fallback.provider_alias, fallback.model) == (
            "openai", "lab-box", "",
        )  # fmt: skip
        assert (base_url_for("openai", fallback, {}), api_key_for("openai", fallback, {})) == (
            "http://box:8000/v1", "x",
        )  # fmt: skip

    def test_openai_behind_a_mapped_provider_keeps_the_real_openai_endpoint(self) -> None:
        settings = resolve_settings(block(provider="lmstudio", fallback="openai"))

        fallback = settings.fallback_settings()

        assert base_url_for("openai", settings, {}) == "http://127.0.0.1:1234/v1"
        assert base_url_for("openai", fallback, {}) is None  # the adapter's own default
        assert api_key_for("openai", fallback, {"OPENAI_API_KEY": "sk-real"}) == "sk-real"

    def test_a_memlane_name_resolves_as_before(self) -> None:
        settings = resolve_settings(block(provider="openai", fallback="local"))

        assert (settings.fallback, settings.fallback_id) == ("local", "local")

    @pytest.mark.parametrize("value", ["bedrock", "auto", "openai-compatible"])
    def test_an_id_provider_would_refuse_or_auto_is_an_error_naming_the_key(
        self, value: str
    ) -> None:
        with pytest.raises(ConfigError) as caught:
            resolve_settings(block(provider="openai", fallback=value))

        assert caught.value.key == "agents.defaults.memorySearch.fallback"


class TestAModelNameTheLocalProviderCannotUse:
    @pytest.mark.parametrize(
        ("env", "config", "named"),
        [
            # Named as the user set it: the variable, or the key.
            ({"MEMLANE_PROVIDER": "local", "MEMLANE_MODEL": "foo-model"}, "{}", "MEMLANE_MODEL"),
            (
                {},
                '{agents: {defaults: {memorySearch: {provider: "local", model: "text-e-3"}}}}',
                "agents.defaults.memorySearch.model",
            ),
            (
                {},
                '{agents: {list: [{id: "main", memorySearch: {provider: "local", model: "m"}}]}}',
                "agents.list[0].memorySearch.model",
            ),
        ],
    )
    def test_is_listed_as_ignored(
        self, tmp_path: Path, env: dict[str, str], config: str, named: str
    ) -> None:
        path = write(tmp_path / "c.json5", config)

        runtime = resolve_runtime(
            env={"HOME": str(tmp_path), **env}, cwd=tmp_path, config=str(path)
        )

        assert [i.key for i in runtime.ignored] == [named]
        assert "local.modelPath" in runtime.ignored[0].reason

    @pytest.mark.parametrize(
        "env",
        [
            {"MEMLANE_PROVIDER": "openai", "MEMLANE_MODEL": "m"},
            {"MEMLANE_PROVIDER": "local"},  # the bundled model's own name, filled in
            {"MEMLANE_PROVIDER": "local", "MEMLANE_MODEL": "multilingual-e5-small"},
        ],
    )
    def test_a_model_that_applies_goes_unremarked(
        self, tmp_path: Path, env: dict[str, str]
    ) -> None:
        assert resolve_runtime(env={"HOME": str(tmp_path), **env}, cwd=tmp_path).ignored == ()


def _with_search_block(tmp_path: Path, block: str) -> RuntimeConfig:
    """The runtime of a config whose agents.defaults.memorySearch is `block` (JSON5)."""
    path = write(tmp_path / "c.json5", f"{{agents: {{defaults: {{memorySearch: {block}}}}}}}")
    return resolve_runtime(env={"HOME": str(tmp_path)}, cwd=tmp_path, config=str(path))


class TestFusionWeightsThatCannotBeScaled:
    def test_both_zero_are_listed_as_ignored_with_the_defaults_used(self, tmp_path: Path) -> None:
        runtime = _with_search_block(
            tmp_path, "{query: {hybrid: {vectorWeight: 0, textWeight: 0}}}"
        )

        assert [i.key.rsplit(".", 1)[1] for i in runtime.ignored] == ["vectorWeight", "textWeight"]
        assert "defaults" in runtime.ignored[0].reason
        assert runtime.settings.query.hybrid.vector_weight > 0

    def test_one_zero_weight_is_a_choice_not_a_problem(self, tmp_path: Path) -> None:
        block = "{query: {hybrid: {vectorWeight: 0, textWeight: 1}}}"

        assert _with_search_block(tmp_path, block).ignored == ()


class TestNumbersBroughtIntoRange:
    @pytest.mark.parametrize(
        ("block", "said"),
        [
            ("{chunking: {tokens: 1.5}}", "1.5 is not a whole number: 1 is used"),
            ("{query: {maxResults: 500}}", "500 is outside [1, 100]: 100 is used"),
            ("{query: {minScore: 1.5}}", "1.5 is outside [0, 1]: 1.0 is used"),
            # A large bound as the docs write it, not 9.0072e+15
            ("{chunking: {tokens: 0}}", "0 is outside [1, 9 007 199 254 740 991]: 1 is used"),
            # Each in range alone; the overlap must be below the size (was cut unseen).
            (
                "{chunking: {tokens: 100, overlap: 400}}",
                "400 is not below tokens (100): 99 is used",
            ),
            (
                "{chunking: {sessionTokens: 10, sessionOverlap: 500}}",
                "500 is not below sessionTokens (10): 9 is used",
            ),
        ],
    )
    def test_the_value_used_is_said(self, tmp_path: Path, block: str, said: str) -> None:
        runtime = _with_search_block(tmp_path, block)

        assert [i.reason for i in runtime.ignored] == [said]
        # Said as adjusted, not ignored: "500 ... is ignored: 100 is used" read as a contradiction.
        assert [i.verb for i in runtime.ignored] == ["is adjusted"]

    def test_a_value_in_range_is_not_remarked(self, tmp_path: Path) -> None:
        block = "{chunking: {tokens: 400.0, overlap: 399}, query: {maxResults: 6, minScore: 0.2}}"

        assert _with_search_block(tmp_path, block).ignored == ()


class TestStoreSettingsTheDriverDoesNotRead:
    def test_a_postgres_url_with_the_sqlite_driver_is_said(self, tmp_path: Path) -> None:
        url = "postgresql://app@db/memory"
        env = {"HOME": str(tmp_path), "MEMLANE_STORE_URL": url}
        path = write(
            tmp_path / "c.json5",
            f'{{agents: {{defaults: {{memorySearch: {{store: {{url: "{url}"}}}}}}}}}}',
        )

        runtime = resolve_runtime(env=env, cwd=tmp_path, config=str(path))

        assert [i.key for i in runtime.ignored] == ["memorySearch.store.url", "MEMLANE_STORE_URL"]
        assert 'driver: "postgres"' in runtime.ignored[0].reason

    def test_a_file_path_with_the_postgres_driver_is_said(self, tmp_path: Path) -> None:
        block = '{store: {driver: "postgres", url: "postgresql://app@db/m", path: "/x/m.db"}}'

        runtime = _with_search_block(tmp_path, block)

        assert [i.key for i in runtime.ignored] == ["memorySearch.store.path"]

    def test_settings_the_driver_reads_are_not_remarked(self, tmp_path: Path) -> None:
        env = {"HOME": str(tmp_path), "MEMLANE_STORE_URL": "postgresql://app@db/m"}
        block = '{store: {driver: "postgres"}}'
        path = write(tmp_path / "c.json5", f"{{agents: {{defaults: {{memorySearch: {block}}}}}}}")

        assert resolve_runtime(env=env, cwd=tmp_path, config=str(path)).ignored == ()
        assert _with_search_block(tmp_path, '{store: {path: "/x/m.db"}}').ignored == ()
