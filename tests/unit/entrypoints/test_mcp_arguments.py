"""The MCP tools enforce their own declared input schemas and name arguments as the schema
spells them; tool text hides host paths."""

from __future__ import annotations

import pytest

from memlane.entrypoints.mcp.arguments import ArgumentsRefused, check_arguments, expected_fields
from memlane.entrypoints.mcp.tools import (
    GET,
    SEARCH,
    STATUS,
    WRITE,
    MemoryTools,
    PathHider,
    host_roots,
    run_tool,
)
from tests.unit.application.conftest import World


@pytest.mark.parametrize(
    ("schema", "args"),
    [
        (SEARCH.schema, {"query": "deploy"}),
        (SEARCH.schema, {"query": "deploy", "maxResults": 5.0, "minScore": 1, "agents": ["a"]}),
        (GET.schema, {"path": "MEMORY.md", "from": 1, "lines": 3, "agent": "ops"}),
        (WRITE.schema, {"text": "x", "mode": "replace", "path": "memory/a.md"}),
        (STATUS.schema, {}),
        (STATUS.schema, {"deep": True}),
    ],
)
def test_arguments_that_fit_the_schema_pass(
    schema: dict[str, object], args: dict[str, object]
) -> None:
    check_arguments(schema, args)


@pytest.mark.parametrize(
    ("schema", "args", "problem"),
    [
        (WRITE.schema, {"content": "x"}, "unknown field 'content'"),
        (WRITE.schema, {"content": "x"}, "missing required field 'text'"),
        (WRITE.schema, {"text": 3}, "field 'text' must be a string, not a number"),
        (WRITE.schema, {"text": "x", "mode": "overwrite"}, "must be one of 'append', 'replace'"),
        (SEARCH.schema, {"query": "q", "maxResults": True}, "must be an integer, not a boolean"),
        (SEARCH.schema, {"query": "q", "maxResults": 2.5}, "must be an integer, not a number"),
        (SEARCH.schema, {"query": "q", "maxResults": 0}, "must be at least 1"),
        (SEARCH.schema, {"query": "q", "minScore": 1.5}, "must be at most 1"),
        (SEARCH.schema, {"query": "q", "agents": "a,b"}, "must be a list, not a string"),
        (SEARCH.schema, {"query": "q", "agents": ["a", 1]}, "must be a list of strings"),
        (SEARCH.schema, {"query": None}, "must be a string, not null"),
        (STATUS.schema, {"deep": "yes"}, "must be true or false, not a string"),
    ],
)
def test_arguments_that_break_the_schema_are_refused_saying_how(
    schema: dict[str, object], args: dict[str, object], problem: str
) -> None:
    with pytest.raises(ArgumentsRefused) as refused:
        check_arguments(schema, args)

    assert problem in str(refused.value)
    assert refused.value.expected == expected_fields(schema)


def test_the_expected_fields_name_type_requirement_and_meaning() -> None:
    fields = expected_fields(WRITE.schema)

    assert fields["text"] == "string, required: The Markdown to remember."
    assert fields["mode"] == "'append' | 'replace'"
    assert expected_fields(SEARCH.schema)["agents"].startswith("list of strings: ")
    assert expected_fields(SEARCH.schema)["since"].startswith("string or number: ")


@pytest.mark.parametrize(
    ("args", "named"),
    [
        ({"asOf": "soonish"}, "asOf: 'soonish' is not a time"),
        ({"asOf": "12"}, "asOf: '12' is too small"),
        ({"asOf": ["2026-01-01"]}, "asOf must be a time"),
        ({"since": "later"}, "since: 'later' is not a time"),
        ({"until": "later"}, "until: 'later' is not a time"),
        ({"maxResults": "many"}, "field 'maxResults' must be an integer"),
    ],
)
def test_an_unusable_argument_is_named_as_the_schema_spells_it(
    args: dict[str, object], named: str
) -> None:
    tools = MemoryTools(manager=World().manager(), write_note=None)

    payload, failed = run_tool(tools, "memory_search", {"query": "deploy", **args})

    assert failed
    assert named in str(payload["error"])
    assert "as_of" not in str(payload["error"])


class TestPathHider:
    hide = PathHider(host_roots("/home/u/ws", "/home/u/.memlane", "/home/u"))

    def test_paths_in_the_workspace_become_relative_and_the_roots_named(self) -> None:
        text = "/home/u/ws/memory/a.md; /home/u/ws. /home/u/.memlane/agents/main/memory.db ~"

        assert (
            self.hide.text(text) == "memory/a.md; <workspace>. <state dir>/agents/main/memory.db ~"
        )

    def test_a_sibling_with_a_longer_name_is_not_the_workspace(self) -> None:
        assert self.hide.text("/home/u/ws2/x.md /home/u/ws.old") == "~/ws2/x.md ~/ws.old"

    def test_payloads_are_hidden_at_every_depth(self) -> None:
        payload: dict[str, object] = {"a": ["/home/u/ws/MEMORY.md", {"b": "/home/u/x"}], "n": 3}

        assert self.hide(payload) == {"a": ["MEMORY.md", {"b": "~/x"}], "n": 3}
