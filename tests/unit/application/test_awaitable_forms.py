"""The facade's awaitable forms take their blocking form's parameters and run it."""

from __future__ import annotations

import asyncio
import inspect

import pytest

from memlane.application.memory import MemoryManager
from memlane.application.reports import SearchResponse
from tests.unit.application.conftest import World


@pytest.mark.parametrize(("awaitable", "blocking"), [("asearch", "search"), ("aget", "get")])
def test_an_awaitable_form_has_the_parameters_of_its_blocking_form(
    awaitable: str, blocking: str
) -> None:
    form = getattr(MemoryManager, awaitable)

    assert inspect.signature(form) == inspect.signature(getattr(MemoryManager, blocking))
    assert inspect.iscoroutinefunction(form)
    assert form.__name__ == awaitable
    assert form.__qualname__ == f"MemoryManager.{awaitable}"


def test_the_awaitable_forms_answer_as_the_blocking_ones(world: World) -> None:
    world.memory.write("MEMORY.md", "# Pets\n\nThe office cat is called Miso.\n")
    manager = world.manager()

    async def ask() -> tuple[SearchResponse, str, str]:
        response = await manager.asearch("office cat", max_results=1)
        got = await manager.aget("MEMORY.md", from_line=3, lines=1)
        status = await manager.astatus(deep=False)
        return response, got.text, status.agent_id

    response, text, agent = asyncio.run(ask())

    assert [r.path for r in response.results] == ["MEMORY.md"]
    assert text == "The office cat is called Miso."
    assert agent == "main"


def test_an_awaitable_form_runs_the_method_the_instance_has(world: World) -> None:
    """As `self.search` did: a subclass's own `search` is the one awaited."""

    class Tagged(MemoryManager):
        def search(self, query: str, **options: object) -> SearchResponse:
            return SearchResponse([], "none", None, "keyword", warnings=(f"tagged: {query}",))

    app = world.application()
    tagged = Tagged(
        settings=app.settings(),
        agents=app.agents(),
        upkeep=app.upkeep(),
        searching=app.searching(),
        reading=app.reading(),
        reporting=app.reporting(),
    )

    response = asyncio.run(tagged.asearch("anything"))

    assert response.warnings == ("tagged: anything",)
