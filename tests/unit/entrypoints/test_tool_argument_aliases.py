"""A tool argument and its alias (`asOf` / `as_of`, `maxResults` / `max_results`) given both
with other values is refused: taking one would ignore the other without a word."""

from __future__ import annotations

import pytest

from memlane.entrypoints.tool_payloads import memory_get_tool, memory_search_tool
from tests.unit.application.conftest import World


@pytest.mark.parametrize(
    ("name", "alias", "one", "other"),
    [
        ("asOf", "as_of", "2026-11-20", "2026-11-01"),
        ("maxResults", "max_results", 3, 5),
        ("minScore", "min_score", 0.1, 0.2),
    ],
)
def test_both_forms_with_other_values_are_refused(
    name: str, alias: str, one: object, other: object
) -> None:
    world = World()
    world.memory.write("MEMORY.md", "# Pets\n\nThe office cat is Miso.\n")

    payload = memory_search_tool(world.manager(), {"query": "cat", name: one, alias: other})

    assert (
        payload["error"] == f"invalid arguments: {name} and {alias} are the same argument: give one"
    )


def test_both_forms_with_the_same_value_are_taken() -> None:
    world = World()
    world.memory.write("MEMORY.md", "# Pets\n\nThe office cat is Miso.\n")

    payload = memory_search_tool(
        world.manager(), {"query": "cat", "maxResults": 1, "max_results": 1}
    )

    assert "error" not in payload and len(payload["results"]) == 1  # type: ignore[arg-type]


def test_get_refuses_from_and_from_line_that_differ() -> None:
    world = World()
    world.memory.write("MEMORY.md", "a\nb\nc\n")

    payload = memory_get_tool(world.manager(), {"path": "MEMORY.md", "from": 1, "from_line": 2})

    assert (
        payload["error"] == "invalid arguments: from and from_line are the same argument: give one"
    )


@pytest.mark.parametrize(
    "params",
    [
        {"asOf": None, "as_of": "2026-11-20"},  # null is unset
        {"maxResults": 2, "max_results": None},
        {"minScore": float("nan"), "min_score": float("nan")},  # NaN is unset, and NaN != NaN
    ],
)
def test_an_unset_form_beside_the_other_is_no_conflict(params: dict[str, object]) -> None:
    world = World()
    world.memory.write("MEMORY.md", "# Pets\n\nThe office cat is Miso.\n")

    payload = memory_search_tool(world.manager(), {"query": "cat", **params})

    assert "error" not in payload
