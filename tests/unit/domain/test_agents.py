"""Agent ids of a search across agents and qualified chunk ids."""

from __future__ import annotations

import pytest

from memlane.domain.agents import MAX_AGENTS, agent_of, parse_agents, qualified
from memlane.domain.chunks import ChunkId
from memlane.domain.errors import InvalidQuery


class TestParseAgents:
    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            ("a,b", ("a", "b")),
            (" a , b ,a,", ("a", "b")),
            (["main", "ops-2", "main"], ("main", "ops-2")),
        ],
    )
    def test_lists_and_comma_strings(self, value: object, expected: tuple[str, ...]) -> None:
        assert parse_agents(value) == expected

    @pytest.mark.parametrize(
        "value", ["", " , ", [], [1], 5, None, ["../etc"], ["a b"], [f"a{i}" for i in range(33)]]
    )
    def test_anything_else_is_an_invalid_query(self, value: object) -> None:
        with pytest.raises(InvalidQuery):
            parse_agents(value)

    def test_the_limit_is_inclusive(self) -> None:
        assert len(parse_agents([f"a{i}" for i in range(MAX_AGENTS)])) == MAX_AGENTS


class TestQualifiedIds:
    def test_the_agent_comes_back_and_same_ids_of_two_agents_differ(self) -> None:
        one, two = qualified("a", ChunkId("c1")), qualified("b", ChunkId("c1"))

        assert one != two
        assert (agent_of(one), agent_of(two), agent_of(ChunkId("c1"))) == ("a", "b", "")
