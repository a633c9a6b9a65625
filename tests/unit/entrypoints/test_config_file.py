"""Unit tests: config file loading, env/CLI overrides, secrets and state paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from memlane.domain.config import MemorySettings, RemoteSettings, SecretRef, StoreSettings
from memlane.domain.errors import ConfigError
from memlane.entrypoints.config.read import (
    ConfigFileError,
    config_path,
    env_overrides,
    load_config,
    parse_config,
)
from memlane.entrypoints.config.running.credentials import api_key_for, base_url_for
from memlane.entrypoints.config.runtime import (
    apply_overrides,
    resolve_runtime,
    resolve_settings,
    sessions_dir,
    state_dir,
    store_path,
    workspace_dir,
)

SAMPLE = """
// memlane config: JSON5, so comments and trailing commas are fine
{
  agents: {
    defaults: {
      memorySearch: {
        provider: 'openai',
        query: { maxResults: 8, },
      },
    },
  },
}
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


class TestLoadConfig:
    def test_an_explicit_path_is_parsed_as_json5(self, tmp_path: Path) -> None:
        file = write(tmp_path / "c.json5", SAMPLE)

        loaded = load_config(str(file), {"HOME": str(tmp_path / "home")})

        assert resolve_settings(loaded).query.max_results == 8

    def test_the_env_variable_names_the_file_when_no_flag_does(self, tmp_path: Path) -> None:
        file = write(tmp_path / "env.json5", "{memory: {citations: 'on'}}")

        loaded = load_config(None, {"MEMLANE_CONFIG": str(file), "HOME": str(tmp_path)})

        assert loaded == {"memory": {"citations": "on"}}

    def test_the_flag_beats_the_env_variable(self, tmp_path: Path) -> None:
        flag = write(tmp_path / "flag.json5", "{memory: {citations: 'off'}}")
        env_file = write(tmp_path / "env.json5", "{memory: {citations: 'on'}}")

        loaded = load_config(str(flag), {"MEMLANE_CONFIG": str(env_file)})

        assert loaded == {"memory": {"citations": "off"}}

    def test_the_default_file_lives_in_the_home_state_dir(self, tmp_path: Path) -> None:
        write(tmp_path / ".memlane" / "config.json5", "{memory: {citations: 'on'}}")

        assert load_config(None, {"HOME": str(tmp_path)}) == {"memory": {"citations": "on"}}

    def test_a_missing_default_file_is_an_empty_config(self, tmp_path: Path) -> None:
        assert load_config(None, {"HOME": str(tmp_path)}) == {}

    @pytest.mark.parametrize("via_env", [False, True])
    def test_a_missing_named_file_is_an_error(self, tmp_path: Path, via_env: bool) -> None:
        missing = str(tmp_path / "nope.json5")
        env = {"HOME": str(tmp_path), **({"MEMLANE_CONFIG": missing} if via_env else {})}

        with pytest.raises(ConfigFileError) as caught:
            load_config(None if via_env else missing, env)

        assert caught.value.key == missing
        assert "not found" in str(caught.value)

    def test_a_syntax_error_names_the_file_line_and_column(self, tmp_path: Path) -> None:
        file = write(tmp_path / "bad.json5", "{\n  agents: {\n    list: [1,,2],\n  },\n}\n")

        with pytest.raises(ConfigFileError) as caught:
            load_config(str(file), {})

        error = caught.value
        assert (error.path, error.line, error.column) == (file, 3, 14)
        assert str(error).startswith(f"{file}: line 3, column 14: ")

    def test_a_duplicate_key_is_an_error(self) -> None:
        with pytest.raises(ConfigFileError, match="Duplicate key"):
            parse_config("{memory: {}, memory: {}}", Path("c.json5"))

    def test_a_top_level_that_is_not_an_object_is_an_error(self) -> None:
        with pytest.raises(ConfigFileError, match="top level"):
            parse_config("[1, 2]", Path("c.json5"))

    def test_a_blank_file_is_an_empty_config(self) -> None:
        assert parse_config("  \n", Path("c.json5")) == {}

    def test_a_file_that_is_not_utf8_is_an_error(self, tmp_path: Path) -> None:
        file = tmp_path / "latin1.json5"
        file.write_bytes(b"{model: '\xe9'}")

        with pytest.raises(ConfigFileError, match="cannot read"):
            load_config(str(file), {})

    def test_config_path_reports_whether_the_file_is_required(self, tmp_path: Path) -> None:
        assert config_path(None, {"HOME": str(tmp_path)}) == (
            tmp_path / ".memlane" / "config.json5",
            False,
        )
        assert config_path("~/x.json5", {"HOME": str(tmp_path)}) == (tmp_path / "x.json5", True)


class TestApplyOverrides:
    def test_an_override_beats_both_the_defaults_and_the_agent_level(self) -> None:
        tree = {
            "agents": {
                "defaults": {"memorySearch": {"provider": "openai"}},
                "list": [{"id": "main", "memorySearch": {"provider": "gemini"}}, {"id": "b"}],
            }
        }

        result = apply_overrides(tree, {"provider": "local", "query.maxResults": 3})

        for agent in ("main", "b"):
            settings = resolve_settings(result, agent)
            assert (settings.provider, settings.query.max_results) == ("local", 3)

    def test_the_input_tree_is_not_changed(self) -> None:
        tree: dict[str, object] = {"agents": {"defaults": {"memorySearch": {"provider": "openai"}}}}

        apply_overrides(tree, {"provider": "local"})

        assert tree == {"agents": {"defaults": {"memorySearch": {"provider": "openai"}}}}

    def test_missing_sections_are_created(self) -> None:
        result = apply_overrides({}, {"query.hybrid.fusion": "rrf"})

        assert resolve_settings(result).query.hybrid.fusion == "rrf"

    def test_an_override_replaces_extra_paths_instead_of_adding(self) -> None:
        tree = {
            "agents": {
                "defaults": {"memorySearch": {"extraPaths": ["a"]}},
                "list": [{"id": "main", "memorySearch": {"extraPaths": ["b"]}}],
            }
        }

        result = apply_overrides(tree, {"extraPaths": ["c"]})

        assert resolve_settings(result).extra_paths == ("c",)

    def test_overridden_values_are_validated_like_file_values(self) -> None:
        result = apply_overrides({}, {"query.maxResults": "three"})

        with pytest.raises(ConfigError) as caught:
            resolve_settings(result)

        assert caught.value.key == "agents.defaults.memorySearch.query.maxResults"

    def test_an_empty_key_segment_is_an_error(self) -> None:
        with pytest.raises(ConfigError):
            apply_overrides({}, {"query..maxResults": 3})

    def test_a_scalar_in_the_way_is_an_error(self) -> None:
        tree = {"agents": {"defaults": {"memorySearch": {"query": 5}}}}

        with pytest.raises(ConfigError) as caught:
            apply_overrides(tree, {"query.maxResults": 3})

        assert caught.value.key == "memorySearch.query"


class TestEnvOverrides:
    def test_provider_model_and_fallback_come_from_memlane_variables(self) -> None:
        env = {"MEMLANE_PROVIDER": "ollama", "MEMLANE_MODEL": "bge-m3", "MEMLANE_FALLBACK": "local"}

        assert env_overrides(env) == {"provider": "ollama", "model": "bge-m3", "fallback": "local"}

    def test_empty_variables_are_ignored(self) -> None:
        assert env_overrides({"MEMLANE_PROVIDER": " ", "PATH": "/bin"}) == {}

    @pytest.mark.parametrize("variable", ["MEMLANE_PROVIDER", "MEMLANE_FALLBACK"])
    def test_an_unusable_value_is_named_by_its_variable(
        self, tmp_path: Path, variable: str
    ) -> None:
        agents = '{agents: {list: [{id: "main", memorySearch: {provider: "local"}}]}}'
        file = write(tmp_path / "c.json5", agents)
        env = {"HOME": str(tmp_path), "MEMLANE_PROVIDER": "openai", variable: "bogus"}

        with pytest.raises(ConfigError) as caught:
            resolve_runtime(env=env, cwd=tmp_path, config=str(file))

        assert caught.value.key == variable
        assert "unsupported provider 'bogus'" in str(caught.value)

    def test_a_flag_over_the_variable_is_named_as_the_flag_wrote_it(self, tmp_path: Path) -> None:
        env = {"HOME": str(tmp_path), "MEMLANE_PROVIDER": "bogus"}

        with pytest.raises(ConfigError) as caught:
            resolve_runtime(env=env, cwd=tmp_path, flags={"provider": "also-bogus"})

        assert caught.value.key == "agents.defaults.memorySearch.provider"


def with_remote(**fields: object) -> MemorySettings:
    return MemorySettings(remote=RemoteSettings(**fields))  # type: ignore[arg-type]


class TestApiKeys:
    def test_the_config_key_wins_over_the_environment(self) -> None:
        settings = with_remote(api_key="from-config")

        assert api_key_for("openai", settings, {"OPENAI_API_KEY": "from-env"}) == "from-config"

    def test_an_env_secret_ref_is_read_from_the_environment(self) -> None:
        settings = with_remote(api_key_ref=SecretRef("env", "TEAM_KEY"))

        assert api_key_for("voyage", settings, {"TEAM_KEY": "t", "VOYAGE_API_KEY": "v"}) == "t"

    def test_a_secret_ref_to_an_unset_variable_is_a_config_error(self) -> None:
        settings = with_remote(api_key_ref=SecretRef("env", "TEAM_KEY"))

        with pytest.raises(ConfigError, match="TEAM_KEY"):
            api_key_for("openai", settings, {})

    @pytest.mark.parametrize(
        ("provider", "variable"),
        [
            ("openai", "OPENAI_API_KEY"),
            ("gemini", "GEMINI_API_KEY"),
            ("gemini", "GOOGLE_API_KEY"),
            ("voyage", "VOYAGE_API_KEY"),
            ("mistral", "MISTRAL_API_KEY"),
            ("ollama", "OLLAMA_API_KEY"),
        ],
    )
    def test_each_provider_reads_its_usual_variable(self, provider: str, variable: str) -> None:
        assert api_key_for(provider, MemorySettings(), {variable: "k"}) == "k"

    def test_gemini_prefers_its_own_variable_over_google(self) -> None:
        env = {"GEMINI_API_KEY": "g", "GOOGLE_API_KEY": "x"}

        assert api_key_for("gemini", MemorySettings(), env) == "g"

    def test_another_providers_variable_is_not_used(self) -> None:
        assert api_key_for("mistral", MemorySettings(), {"OPENAI_API_KEY": "k"}) is None

    @pytest.mark.parametrize("provider", ["local", "none", "auto"])
    def test_providers_without_keys_get_none(self, provider: str) -> None:
        settings = with_remote(api_key="k")

        assert api_key_for(provider, settings, {"OPENAI_API_KEY": "k"}) is None

    def test_an_empty_variable_counts_as_unset(self) -> None:
        assert api_key_for("openai", MemorySettings(), {"OPENAI_API_KEY": ""}) is None


class TestBaseUrls:
    def test_the_config_base_url_wins(self) -> None:
        settings = with_remote(base_url="http://proxy:8080/v1")

        env = {"OPENAI_BASE_URL": "http://other"}
        assert base_url_for("openai", settings, env) == "http://proxy:8080/v1"

    def test_openai_reads_openai_base_url(self) -> None:
        env = {"OPENAI_BASE_URL": "http://gw/v1"}

        assert base_url_for("openai", MemorySettings(), env) == "http://gw/v1"

    @pytest.mark.parametrize(
        ("host", "expected"),
        [("gpu-box:11434", "http://gpu-box:11434"), ("https://o.lan", "https://o.lan")],
    )
    def test_ollama_reads_ollama_host_adding_a_scheme(self, host: str, expected: str) -> None:
        assert base_url_for("ollama", MemorySettings(), {"OLLAMA_HOST": host}) == expected

    def test_other_providers_use_their_adapter_default(self) -> None:
        env = {"OPENAI_BASE_URL": "http://gw", "OLLAMA_HOST": "h"}

        assert base_url_for("gemini", MemorySettings(), env) is None


class TestStatePaths:
    def test_state_dir_precedence_is_flag_then_env_then_home(self, tmp_path: Path) -> None:
        env = {"HOME": str(tmp_path), "MEMLANE_STATE_DIR": "/srv/memlane"}

        assert state_dir("/flag", env) == Path("/flag")
        assert state_dir(None, env) == Path("/srv/memlane")
        assert state_dir(None, {"HOME": str(tmp_path)}) == tmp_path / ".memlane"

    def test_the_store_defaults_to_the_agents_folder(self) -> None:
        path = store_path(MemorySettings(), Path("/state"), "work")

        assert path == Path("/state/agents/work/memory.db")

    def test_a_configured_store_path_expands_agent_and_home(self, tmp_path: Path) -> None:
        settings = MemorySettings(store=StoreSettings(path="~/idx/{agentId}.db"))

        path = store_path(settings, Path("/state"), "work", {"HOME": str(tmp_path)})

        assert path == tmp_path / "idx" / "work.db"

    def test_a_relative_store_path_is_under_the_state_dir(self) -> None:
        settings = MemorySettings(store=StoreSettings(path="custom/{agentId}.sqlite"))

        assert store_path(settings, Path("/state"), "a") == Path("/state/custom/a.sqlite")

    def test_sessions_default_to_the_agents_folder(self) -> None:
        path = sessions_dir(MemorySettings(), Path("/state"), "main")

        assert path == Path("/state/agents/main/sessions")

    def test_a_configured_sessions_dir_wins(self) -> None:
        settings = MemorySettings(sessions_dir="/data/{agentId}/transcripts")

        assert sessions_dir(settings, Path("/s"), "main") == Path("/data/main/transcripts")

    def test_an_unsafe_agent_id_never_becomes_a_path(self) -> None:
        with pytest.raises(ConfigError):
            store_path(MemorySettings(), Path("/state"), "../../etc")


class TestWorkspaceDir:
    def test_precedence_is_flag_then_env_then_config_then_cwd(self, tmp_path: Path) -> None:
        tree = {"agents": {"defaults": {"workspace": "/from-config"}}}
        env = {"MEMLANE_WORKSPACE": "/from-env"}

        assert workspace_dir("/flag", env, tree, None, tmp_path) == Path("/flag")
        assert workspace_dir(None, env, tree, None, tmp_path) == Path("/from-env")
        assert workspace_dir(None, {}, tree, None, tmp_path) == Path("/from-config")
        assert workspace_dir(None, {}, {}, None, tmp_path) == tmp_path

    def test_a_relative_workspace_is_taken_from_cwd(self, tmp_path: Path) -> None:
        assert workspace_dir("examples/workspace", {}, {}, None, tmp_path) == (
            tmp_path / "examples" / "workspace"
        )


class TestResolveRuntime:
    def test_flags_beat_env_which_beats_the_file(self, tmp_path: Path) -> None:
        file = write(tmp_path / "c.json5", SAMPLE)
        env = {"HOME": str(tmp_path), "MEMLANE_PROVIDER": "gemini", "MEMLANE_MODEL": "m-env"}

        from_env = resolve_runtime(env=env, cwd=tmp_path, config=str(file))
        from_flags = resolve_runtime(
            env=env, cwd=tmp_path, config=str(file), flags={"provider": "local"}
        )

        assert (from_env.settings.provider, from_env.settings.model) == ("gemini", "m-env")
        assert from_env.settings.query.max_results == 8
        assert (from_flags.settings.provider, from_flags.settings.model) == ("local", "m-env")

    def test_paths_are_resolved_for_the_chosen_agent(self, tmp_path: Path) -> None:
        env = {"HOME": str(tmp_path), "MEMLANE_AGENT": "work"}

        runtime = resolve_runtime(env=env, cwd=tmp_path, workspace="ws")

        assert runtime.agent_id == "work"
        assert runtime.state_dir == tmp_path / ".memlane"
        assert runtime.store_path == tmp_path / ".memlane" / "agents" / "work" / "memory.db"
        assert runtime.sessions_dir == tmp_path / ".memlane" / "agents" / "work" / "sessions"
        assert runtime.workspace == tmp_path / "ws"
        assert runtime.config_path is None

    def test_the_agent_flag_beats_the_env_variable(self, tmp_path: Path) -> None:
        env = {"HOME": str(tmp_path), "MEMLANE_AGENT": "work"}

        runtime = resolve_runtime(env=env, cwd=tmp_path, agent_id="main", state="/s")

        assert runtime.store_path == Path("/s/agents/main/memory.db")

    def test_the_config_names_the_default_agent(self, tmp_path: Path) -> None:
        file = write(tmp_path / "c.json5", "{agents: {list: [{id: 'ops'}]}}")

        runtime = resolve_runtime(env={"HOME": str(tmp_path)}, cwd=tmp_path, config=str(file))

        assert runtime.agent_id == "ops"
        assert runtime.config_path == file
