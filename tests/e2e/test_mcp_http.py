"""E2E: `memlane mcp --http` as a real process: bearer token, open health, concurrent clients.

Also, in process: a search answered before the first sync has finished says so.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from memlane.entrypoints.api import open_manager
from memlane.entrypoints.mcp.app import memory_tools
from memlane.entrypoints.mcp.server import build_server
from tests.e2e._mcp_support import Home, free_port, make_home, python

pytestmark = pytest.mark.e2e

TOKEN = "mcp-e2e-token-7c2f"


class Served:
    def __init__(self, proc: subprocess.Popen[bytes], port: int, stderr: Path) -> None:
        self.proc, self.port, self.stderr = proc, port, stderr

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    @asynccontextmanager
    async def client(self, token: str = TOKEN) -> AsyncIterator[Client]:
        """An SDK client over streamable HTTP sending `token`; closes its HTTP pool too."""
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(120)) as http,
            Client(
                streamable_http_client(self.url, http_client=http), read_timeout_seconds=120
            ) as client,
        ):
            yield client


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = make_home(tmp_path_factory.mktemp("mcp-http"))
    port = free_port()
    stderr = home.root / "stderr.log"
    with stderr.open("wb") as err:
        proc = subprocess.Popen(
            [python(), *home.args("--http", "--port", str(port), "--token", TOKEN)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
            env=home.env(), cwd=home.root,
        )  # fmt: skip
    served = Served(proc, port, stderr)
    try:
        _wait_healthy(served)
        yield served
    finally:
        proc.terminate()
        proc.wait(30)


def _wait_healthy(served: Served) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if served.proc.poll() is not None:
            pytest.fail(f"memlane mcp --http exited:\n{served.stderr.read_text()[-3000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{served.port}/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    pytest.fail("memlane mcp --http never became healthy")


def _initialize() -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }


class TestHttpAuth:
    def test_health_is_open_and_everything_else_needs_the_token(self, served: Served) -> None:
        """No token and a wrong token get 401 with WWW-Authenticate; health needs none."""
        headers = {"Accept": "application/json, text/event-stream"}

        health = httpx.get(f"http://127.0.0.1:{served.port}/health")
        missing = httpx.post(served.url, json=_initialize(), headers=headers)
        wrong = httpx.post(
            served.url, json=_initialize(), headers={**headers, "Authorization": "Bearer nope"}
        )
        right = httpx.post(
            served.url, json=_initialize(), headers={**headers, "Authorization": f"Bearer {TOKEN}"}
        )

        assert health.status_code == 200 and health.json() == {"status": "serving"}
        assert missing.status_code == 401 and wrong.status_code == 401
        assert missing.headers["www-authenticate"].startswith("Bearer")
        assert right.status_code == 200

    def test_the_sdk_client_is_refused_with_a_wrong_token(self, served: Served) -> None:
        async def scenario() -> None:
            async with served.client("wrong") as client:
                await client.list_tools()

        with pytest.raises(ExceptionGroup) as caught:  # the SDK reports the 401 as an MCPError
            anyio.run(scenario)
        assert caught.group_contains(MCPError, depth=2)


class TestHttpConcurrency:
    def test_eight_clients_search_while_another_writes(self, served: Served) -> None:
        """Every search answers; the write lands and is found right after."""
        answers: list[int] = []

        async def searcher() -> None:
            async with served.client() as client:
                for _ in range(5):
                    result = await client.call_tool("memory_search", {"query": "deploy Friday"})
                    assert not result.is_error
                    answers.append(len(result.structured_content["results"]))

        async def writer() -> None:
            async with served.client() as client:
                for i in range(5):
                    result = await client.call_tool(
                        "memory_write",
                        {"text": f"Concurrency note {i}: quokka{i}", "path": "memory/load.md"},
                    )
                    assert not result.is_error, result.content
                found = await client.call_tool("memory_search", {"query": "quokka4"})
                paths = [r["path"] for r in found.structured_content["results"]]
                assert paths == ["memory/load.md"]

        async def scenario() -> None:
            async with anyio.create_task_group() as group:
                for _ in range(8):
                    group.start_soon(searcher)
                group.start_soon(writer)

        anyio.run(scenario)

        assert len(answers) == 40 and all(n >= 1 for n in answers)


class TestStartup:
    def test_a_search_before_the_first_sync_finishes_says_so(self, tmp_path: Path) -> None:
        """In process, with the first sync not yet marked done: the payload warns."""
        home: Home = make_home(tmp_path)
        manager = open_manager(
            workspace=home.workspace,
            state_dir=home.state,
            config={"provider": "none"},
            env={"HOME": str(home.root)},
        )
        tools = memory_tools(manager, read_only=True)

        async def scenario() -> dict[str, object]:
            async with Client(build_server(tools, list)) as client:
                result = await client.call_tool("memory_search", {"query": "deploy"})
                return result.structured_content or {}

        try:
            payload = anyio.run(scenario)
        finally:
            manager.close()

        assert any("still being built" in w for w in payload["warnings"])  # type: ignore[attr-defined]


def test_the_server_says_where_it_listens(served: Served) -> None:
    """As `serve` and `ui` do, on stderr (stdout would be the stdio protocol's)."""
    said = served.stderr.read_text()

    assert f"memlane mcp listening on http://127.0.0.1:{served.port}/mcp" in said
