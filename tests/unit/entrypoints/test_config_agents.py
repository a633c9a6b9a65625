"""Unit tests: the agents of a config tree: the default agent, the agent asked for, agent ids,
each agent's workspace."""

from __future__ import annotations

import pytest

from memlane.domain.config import MemorySettings
from memlane.domain.errors import ConfigError
from memlane.entrypoints.config.runtime import (
    default_agent_id,
    resolve_settings,
    resolve_workspace,
    validate_agent_id,
)
from tests.unit.entrypoints.config_trees import config_error, tree


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
