"""Item 14.9: a huge query is answered within the caps, an absurd one refused at every entry point.

Through the real CLI (stdin, `--query -`), the real gRPC server and client, the Python API and
tool payload, and `memlane mcp` over stdio. The caps themselves (model window, keyword terms)
are asserted in tests/unit/application/test_query_bounds.py; the time is measured in
bench/studies/query_length_bench.py, not here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import anyio
import grpc
import pytest
from mcp import Client, StdioServerParameters

import memlane
from memlane.application.memory import MemoryManager
from memlane.domain.errors import InvalidQuery
from memlane.domain.search import MAX_QUERY_CHARS
from memlane.entrypoints.grpc.client import MemlaneClient, MemlaneRpcError
from memlane.entrypoints.grpc.server import build_server
from memlane.entrypoints.tool_payloads import memory_search_tool
from tests.e2e import _mcp_support
from tests.e2e._loud_support import make_home, no_traceback
from tests.e2e._loud_support import memlane as run_cli

pytestmark = pytest.mark.e2e

# A question followed by a 100 KB paste of words that match nothing.
HUGE = ("dark mode tabs " + " ".join(f"zq{i}x" for i in range(30_000)))[: 100 * 1024]
ABSURD = "tabs " * (MAX_QUERY_CHARS // 5 + 1)
assert len(HUGE) < MAX_QUERY_CHARS < len(ABSURD)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return make_home(tmp_path)


@pytest.fixture
def manager(home: Path) -> Iterator[MemoryManager]:
    opened = memlane.open(
        workspace=home / "ws", state_dir=home / "state", config={"provider": "none"}
    )
    opened.sync()
    yield opened
    opened.close()


class TestCli:
    def test_a_100_kb_query_on_stdin_is_answered(self, home: Path) -> None:
        done = run_cli(home, "search", "--json", "--query", "-", stdin=HUGE)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["results"][0]["path"] == "MEMORY.md"

    def test_an_absurd_query_exits_2_before_touching_the_index(self, home: Path) -> None:
        done = run_cli(home, "search", "--query", "-", stdin=ABSURD)
        assert done.returncode == 2
        # Not "131073 characters": only one past the limit is read, the rest never is.
        assert f"query too long: more than {MAX_QUERY_CHARS} characters" in done.stderr
        assert no_traceback(done)
        assert not (home / "state" / "agents").exists()  # nothing opened, nothing synced
        again = run_cli(home, "search", "tabs")  # and the memory is all there
        assert again.returncode == 0 and "MEMORY.md" in again.stdout


class TestGrpc:
    def test_an_absurd_query_is_invalid_argument_and_a_huge_one_answers(
        self, manager: MemoryManager
    ) -> None:
        server, port = build_server(manager, host="127.0.0.1", port=0)
        server.start()
        try:
            with MemlaneClient(f"127.0.0.1:{port}") as client:
                with pytest.raises(MemlaneRpcError) as refused:
                    client.search(ABSURD)
                answered = client.search(HUGE)
        finally:
            server.stop(grace=None)
        assert refused.value.code is grpc.StatusCode.INVALID_ARGUMENT
        assert "query too long" in refused.value.details
        assert answered.results[0].path == "MEMORY.md"


class TestPythonApi:
    @pytest.mark.parametrize("query", [None, 5, ABSURD])
    def test_search_raises_invalid_query(self, manager: MemoryManager, query: object) -> None:
        with pytest.raises(InvalidQuery, match=r"query must be a string|query too long"):
            manager.search(query)  # type: ignore[arg-type]

    def test_the_tool_payload_says_it(self, manager: MemoryManager) -> None:
        payload = memory_search_tool(manager, {"query": ABSURD})
        assert "disabled" not in payload  # a wrong call, not memory off
        assert str(payload["error"]).startswith("invalid arguments: query too long")
        assert memory_search_tool(manager, {"query": HUGE})["results"]


def test_mcp_memory_search_refuses_an_absurd_query(tmp_path: Path) -> None:
    mcp_home = _mcp_support.make_home(tmp_path)
    params = StdioServerParameters(
        command=_mcp_support.python(),
        args=mcp_home.args(),
        env=mcp_home.env(),
        cwd=str(mcp_home.root),
    )
    payloads: list[dict[str, object]] = []

    async def main() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            result = await client.call_tool("memory_search", {"query": ABSURD})
            payloads.append(json.loads(result.content[0].text))  # type: ignore[union-attr]

    anyio.run(main)
    (payload,) = payloads
    assert "disabled" not in payload  # a wrong call, not memory off
    assert str(payload["error"]).startswith("invalid arguments: query too long")
