"""Unit tests: everything derived from the key table agrees with the resolver and the README."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, get_args

import json5
import pytest
from click.testing import CliRunner

from memlane.domain.config import FallbackName, MemorySettings, ProviderName
from memlane.domain.errors import ConfigError
from memlane.domain.providers import AUTO_ORDER, PROVIDER_NAMES
from memlane.entrypoints.cli import cli
from memlane.entrypoints.config.keys import MEMORY_KEYS, MEMORY_SEARCH_KEYS, Key
from memlane.entrypoints.config.runtime import resolve_settings
from memlane.entrypoints.config.schema import (
    effective_settings,
    json_schema,
    keys_markdown,
    render_readme,
)

README = Path(__file__).resolve().parents[3] / "README.md"


def validate(instance: Any, schema: dict[str, Any], root: dict[str, Any]) -> list[str]:
    """Check `instance` against the JSON Schema keywords the published schema uses.

    Returns the problems found (empty: valid). Supported: $ref (local), type, enum, const,
    properties, additionalProperties, required, items, anyOf, pattern, minLength. Any other
    keyword fails the test, so the schema cannot grow past what this checker understands.
    """
    known = {"$ref", "type", "enum", "const", "properties", "additionalProperties", "required",
             "items", "anyOf", "pattern", "minLength", "description", "default", "$schema",
             "title", "$defs"}  # fmt: skip
    assert set(schema) <= known, set(schema) - known
    if "$ref" in schema:
        target: Any = root
        for part in schema["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        return validate(instance, target, root)
    if "anyOf" in schema:
        if all(validate(instance, option, root) for option in schema["anyOf"]):
            return [f"{instance!r} matches no alternative"]
        return []
    types = schema.get("type")
    if types is not None:
        allowed = types if isinstance(types, list) else [types]
        if not any(_is(instance, name) for name in allowed):
            return [f"{instance!r} is not {allowed}"]
    if "enum" in schema and instance not in schema["enum"]:
        return [f"{instance!r} not in {schema['enum']}"]
    if "const" in schema and instance != schema["const"]:
        return [f"{instance!r} is not {schema['const']!r}"]
    if isinstance(instance, str):
        if "pattern" in schema and not re.search(schema["pattern"], instance):
            return [f"{instance!r} does not match {schema['pattern']}"]
        if len(instance) < schema.get("minLength", 0):
            return [f"{instance!r} is too short"]
    problems: list[str] = []
    if isinstance(instance, list) and "items" in schema:
        for item in instance:
            problems += validate(item, schema["items"], root)
    if isinstance(instance, dict):
        problems += [
            f"missing {name}" for name in schema.get("required", []) if name not in instance
        ]
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for name, value in instance.items():
            if name in properties:
                problems += validate(value, properties[name], root)
            elif extra is False:
                problems.append(f"unknown key {name}")
            elif isinstance(extra, dict):
                problems += validate(value, extra, root)
    return problems


def _is(value: Any, name: str) -> bool:
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return {
        "null": value is None,
        "boolean": isinstance(value, bool),
        "string": isinstance(value, str),
        "array": isinstance(value, list),
        "object": isinstance(value, dict),
    }[name]


def schema_problems(config: dict[str, Any]) -> list[str]:
    schema = json_schema()
    return validate(config, schema, schema)


def with_key(key: Key, value: object) -> dict[str, Any]:
    """A config setting one memorySearch key to `value`."""
    node: dict[str, Any] = {}
    *parents, leaf = key.path.split(".")
    current = node
    for part in parents:
        current[part] = current = {}
    current[leaf] = value
    return {"agents": {"defaults": {"memorySearch": node}}}


def _json_value(value: object) -> object:
    return list(value) if isinstance(value, tuple) else value


# A value of the wrong shape for each kind of key: the resolver and the schema must both refuse it.
WRONG: dict[str, object] = {
    "bool": "yes", "number": "3", "integer": True, "string": 7, "choice": "bogus",
    "choices": ["bogus"], "strings": [1], "patterns": "x", "headers": ["a"], "secret": 5,
    "provider": 7,
}  # fmt: skip


class TestReadme:
    def test_the_readme_key_list_is_generated_from_the_table(self) -> None:
        text = README.read_text(encoding="utf-8")

        assert render_readme(text) == text, "regenerate with schema.render_readme(README)"

    def test_every_key_has_a_row(self) -> None:
        rows = keys_markdown()

        for key in MEMORY_SEARCH_KEYS:
            assert f"| `{key.path}` |" in rows
        for key in MEMORY_KEYS:
            assert f"| `memory.{key.path}` |" in rows


class TestSchema:
    def test_the_readme_example_config_is_valid(self) -> None:
        text = README.read_text(encoding="utf-8")
        example = re.search(r"```json5\n(.*?)```", text, re.S)
        assert example is not None
        config = json5.loads(example.group(1))

        assert schema_problems(config) == []
        resolve_settings(config)

    def test_a_config_setting_every_key_to_its_default_is_valid(self) -> None:
        block: dict[str, Any] = {}
        for key in MEMORY_SEARCH_KEYS:
            if key.default is not None:
                value = {} if key.kind == "headers" else _json_value(key.default)
                _deep_merge(block, with_key(key, value))
        config = {
            "agents": {
                "defaults": {"memorySearch": block, "workspace": "~/w"},
                "list": [{"id": "main", "default": True, "memorySearch": {"model": "m"}}],
            },
            "memory": {"backend": "builtin", "citations": "auto"},
            "gateway": {"port": 1},  # the host system's keys are tolerated
        }

        assert schema_problems(config) == []
        assert resolve_settings(config, "main").query == MemorySettings().query

    def test_null_means_unset_for_both(self) -> None:
        config = with_key(MEMORY_SEARCH_KEYS[0], None)

        assert schema_problems(config) == []
        assert resolve_settings(config) == MemorySettings()

    def test_out_of_range_numbers_are_clamped_not_rejected_by_both(self) -> None:
        config = {"agents": {"defaults": {"memorySearch": {"query": {"maxResults": 1e9}}}}}

        assert schema_problems(config) == []
        assert resolve_settings(config).query.max_results == 100

    @pytest.mark.parametrize("key", MEMORY_SEARCH_KEYS, ids=lambda key: key.path)
    def test_a_wrong_value_is_refused_by_both(self, key: Key) -> None:
        if key.kind == "opaque":
            pytest.skip("opaque keys accept anything")
        config = with_key(key, WRONG[key.kind])

        assert schema_problems(config) != []
        with pytest.raises(ConfigError):
            resolve_settings(config)

    def test_an_unknown_key_is_refused_by_both(self) -> None:
        config = {"agents": {"defaults": {"memorySearch": {"query": {"maxResult": 3}}}}}

        assert schema_problems(config) == ["unknown key maxResult"]
        with pytest.raises(ConfigError, match="maxResults"):
            resolve_settings(config)

    def test_an_agent_id_that_is_not_a_directory_name_is_refused_by_both(self) -> None:
        config = {"agents": {"list": [{"id": "../x"}]}}

        assert schema_problems(config) != []
        with pytest.raises(ConfigError):
            resolve_settings(config)

    def test_config_schema_prints_the_schema(self) -> None:
        result = CliRunner().invoke(cli, ["config", "schema"])

        assert result.exit_code == 0, result.output
        assert json.loads(result.output) == json_schema()


class TestTable:
    def test_defaults_are_the_settings_objects_defaults(self) -> None:
        assert resolve_settings({}) == MemorySettings()

    def test_provider_names_come_from_the_registry(self) -> None:
        assert set(get_args(ProviderName)) == {"auto", "none", *PROVIDER_NAMES}
        assert set(get_args(FallbackName)) == {"none", *PROVIDER_NAMES}
        assert "ollama" not in AUTO_ORDER

    def test_effective_settings_show_resolved_values_and_hide_header_values(self) -> None:
        config = {
            "agents": {
                "defaults": {
                    "memorySearch": {
                        "query": {"maxResults": 2.7},
                        "remote": {"headers": {"X-Api-Token": "s3cret"}},
                    }
                }
            }
        }

        shown = effective_settings(resolve_settings(config))

        assert shown["query.maxResults"] == 2
        assert shown["remote.headers"] == ["X-Api-Token"]
        assert "s3cret" not in json.dumps(shown)
        assert shown["memory.citations"] == "auto"


def _deep_merge(target: dict[str, Any], config: dict[str, Any]) -> None:
    source = config["agents"]["defaults"]["memorySearch"]
    stack = [(target, source)]
    while stack:
        into, part = stack.pop()
        for name, value in part.items():
            if isinstance(value, dict) and isinstance(into.get(name), dict):
                stack.append((into[name], value))
            else:
                into[name] = value
