"""Item 14.6: an explicitly configured provider that cannot run is never silent.

A real HTTP server on 127.0.0.1 answers every embedding request with 500 (or nothing listens at
all); `index`, `search`, `status`, the tool payload and the gRPC server all say so in one line,
and within the cool-down the server is not asked again. `provider: "none"` stays silent.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

import memlane
from memlane.entrypoints.grpc.client import MemlaneClient
from memlane.entrypoints.grpc.server import build_server
from memlane.entrypoints.tool_payloads import memory_search_tool
from tests.e2e._loud_support import cli_env, make_home, no_traceback
from tests.e2e._loud_support import memlane as run_cli
from tests.pg_server import fresh_database

pytestmark = pytest.mark.e2e


class _Failing(BaseHTTPRequestHandler):
    hits = 0

    def do_POST(self) -> None:
        type(self).hits += 1
        body = b'{"error": {"message": "upstream exploded", "type": "server_error"}}'
        self.send_response(500)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def failing_server() -> Iterator[str]:
    _Failing.hits = 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Failing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.fixture
def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"  # nothing listens there any more


def _openai_block(base_url: str) -> dict[str, object]:
    return {
        "provider": "openai",
        "model": "text-embedding-3-small",
        "remote": {"baseUrl": base_url, "apiKey": "sk-test", "timeoutSeconds": 2,
                   "queryTimeoutSeconds": 2},
    }  # fmt: skip


def _config(home: Path, block: dict[str, object]) -> Path:
    path = home / "config.json5"
    path.write_text(json.dumps({"agents": {"defaults": {"memorySearch": block}}}))
    return path


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("warning: ")]


def _index_warns(home: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`index` against a provider that fails: keyword rows written, one warning, exit 0."""
    indexed = run_cli(home, "index", env=env)
    assert indexed.returncode == 0, indexed.stderr
    assert "2 file(s) indexed" in indexed.stdout  # keyword indexing went on
    (warning,) = _warnings(indexed.stderr)
    assert warning.startswith("warning: embedding provider openai failed (")
    assert no_traceback(indexed)
    return indexed


def _search_is_keyword_only_and_warns(home: Path, env: dict[str, str]) -> None:
    """A search while the provider fails: keyword-only, nothing lost, the one warning said on
    stderr and in the payload alike."""
    searched = run_cli(home, "search", "--json", "tabs", env=env)
    assert searched.returncode == 0, searched.stderr
    payload = json.loads(searched.stdout)
    assert payload["mode"] == "keyword"
    assert payload["results"][0]["path"] == "MEMORY.md"  # nothing lost
    (warning,) = _warnings(searched.stderr)
    assert payload["warnings"] == [warning.removeprefix("warning: ")]
    assert no_traceback(searched)


def test_index_search_and_status_warn_in_every_process(
    tmp_path: Path, closed_port_url: str
) -> None:
    """Nothing listens at the base URL. (A server that answers 500: the same checks, in
    `test_a_down_provider_warns_in_every_new_process_until_it_answers`.)"""
    home = make_home(tmp_path)
    config = _config(home, _openai_block(closed_port_url))
    env = cli_env(home, MEMLANE_CONFIG=str(config))
    del env["MEMLANE_PROVIDER"]

    _index_warns(home, env)
    _search_is_keyword_only_and_warns(home, env)


def test_a_provider_without_a_key_shows_in_status_of_a_fresh_process(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    env = cli_env(home, MEMLANE_PROVIDER="openai")  # and no OPENAI_API_KEY

    status = run_cli(home, "status", env=env)
    searched = run_cli(home, "search", "tabs", env=env)

    assert "Warning: embedding provider openai is configured but cannot run" in status.stdout
    (warning,) = _warnings(searched.stderr)
    assert "search is keyword-only" in warning
    assert "MEMORY.md" in searched.stdout


def test_provider_none_is_silent(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    for args in (("index",), ("search", "tabs"), ("status",)):
        done = run_cli(home, *args)  # MEMLANE_PROVIDER=none
        assert done.returncode == 0
        assert _warnings(done.stderr) == [] and "Warning:" not in done.stdout


def test_a_failed_provider_is_not_asked_again_within_the_cool_down(
    tmp_path: Path, failing_server: str
) -> None:
    home = make_home(tmp_path)
    manager = memlane.open(
        workspace=home / "ws", state_dir=home / "state", config=_openai_block(failing_server)
    )
    try:
        manager.sync()
        first = memory_search_tool(manager, {"query": "tabs"})
        hits = _Failing.hits
        assert hits > 0  # the server was really asked
        second = memory_search_tool(manager, {"query": "tabs"})
        grpc_server, port = build_server(manager, host="127.0.0.1", port=0)
        grpc_server.start()
        try:
            with MemlaneClient(f"127.0.0.1:{port}") as client:
                over_grpc = client.search("tabs")
        finally:
            grpc_server.stop(grace=None)
        assert _Failing.hits == hits  # neither search nor gRPC waited on the server again
    finally:
        manager.close()
    for payload in (first, second):
        warnings = payload["warnings"]
        assert isinstance(warnings, list)
        (warning,) = warnings
        assert "embedding provider openai failed" in warning
        assert "keyword-only for the next" in warning
        assert payload["results"]
    (grpc_warning,) = over_grpc.warnings
    assert "keyword-only for the next" in grpc_warning


def _vector(text: str) -> list[float]:
    """A deterministic 1536-dimension vector (the size text-embedding-3-small has)."""
    vector = [0.0] * 1536
    for word in text.lower().split():
        vector[sum(map(ord, word)) % 1536] += 1.0
    vector[0] += 0.1  # never all zeros
    return vector


class _Switchable(BaseHTTPRequestHandler):
    """OpenAI's embeddings wire format; answers 500 while `down` is set."""

    down = True
    hits = 0

    def do_POST(self) -> None:
        type(self).hits += 1
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        inputs = request["input"] if isinstance(request["input"], list) else [request["input"]]
        body: dict[str, object]
        if type(self).down:
            status, body = 500, {"error": {"message": "upstream exploded", "type": "server_error"}}
        else:
            data = [
                {"object": "embedding", "index": i, "embedding": _vector(text)}
                for i, text in enumerate(inputs)
            ]
            status, body = 200, {"object": "list", "data": data, "model": request["model"]}
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def switchable_server() -> Iterator[str]:
    _Switchable.down, _Switchable.hits = True, 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Switchable)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def _mcp_status(home: Path, env: dict[str, str]) -> dict[str, object]:
    """`memory_status` of a `memlane mcp` process started now, through the SDK's client."""
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m", "memlane.entrypoints",
            "--state-dir", str(home / "state"), "--workspace", str(home / "ws"), "mcp",
        ],
        env=env,
        cwd=str(home),
    )  # fmt: skip
    found: dict[str, object] = {}

    async def main() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            result = await client.call_tool("memory_status", {})
            found.update(json.loads(result.content[0].text))  # type: ignore[union-attr]

    anyio.run(main)
    return found


def _grpc_status(home: Path, config: dict[str, object]) -> tuple[list[str], list[str]]:
    """(status warnings, search warnings) from a gRPC server over a manager opened now."""
    manager = memlane.open(workspace=home / "ws", state_dir=home / "state", config=config)
    try:
        server, port = build_server(manager, host="127.0.0.1", port=0)
        server.start()
        try:
            with MemlaneClient(f"127.0.0.1:{port}") as client:
                status = client.status()
                searched = client.search("tabs")
        finally:
            server.stop(grace=None)
    finally:
        manager.close()
    return list(status.warnings), list(searched.warnings)


def test_a_down_provider_warns_in_every_new_process_until_it_answers(
    tmp_path: Path, switchable_server: str
) -> None:
    """The provider answers 500: `index` and a `search` warn, and the failure found by `index`
    is kept with the index: a new `status` (text, JSON), a new MCP server's `memory_status` and
    a new gRPC server's Status say it without calling the provider; once the provider answers a
    search, every new process is quiet again."""
    home = make_home(tmp_path)
    block = _openai_block(switchable_server)
    env = cli_env(home, MEMLANE_CONFIG=str(_config(home, block)))
    del env["MEMLANE_PROVIDER"]

    # The 500 case of `test_index_search_and_status_warn_in_every_process` (its search below).
    indexed = _index_warns(home, env)
    hits = _Switchable.hits

    status = run_cli(home, "status", env=env)
    as_json = run_cli(home, "status", "--json", env=env)
    assert _Switchable.hits == hits  # neither asked the provider: the record says it
    # The servers may ask it themselves (the MCP server's first sync backfills vectors, the
    # gRPC search embeds the query): either the recorded or their own failure is said.
    mcp = _mcp_status(home, env)
    grpc_status, _ = _grpc_status(home, block)
    assert status.returncode == 0 and as_json.returncode == 0, status.stderr + as_json.stderr
    line = "Warning: embedding provider openai failed when last used (openai embeddings failed"
    (shown,) = [x for x in status.stdout.splitlines() if x.startswith("Warning: ")]
    assert shown.startswith(line) and "500 server_error upstream exploded" in shown
    (in_json,) = json.loads(as_json.stdout)["warnings"]
    assert in_json == shown.removeprefix("Warning: ")
    for warnings in (mcp["warnings"], grpc_status):
        assert isinstance(warnings, list)
        (warning,) = warnings
        assert warning.startswith("embedding provider openai failed")
    assert all(no_traceback(d) for d in (indexed, status, as_json))

    # A search while the provider is still down: keyword-only, nothing lost, one warning (run
    # after the status checks, so that the failure they say is the one `index` found).
    _search_is_keyword_only_and_warns(home, env)

    _Switchable.down = False  # the server is back
    searched = run_cli(home, "search", "--json", "tabs", env=env)
    assert searched.returncode == 0, searched.stderr
    assert json.loads(searched.stdout)["mode"] == "hybrid", searched.stdout + searched.stderr
    assert _warnings(searched.stderr) == []

    status = run_cli(home, "status", "--json", env=env)
    assert json.loads(status.stdout)["warnings"] == []
    mcp = _mcp_status(home, env)  # one MCP server, read once: nothing changes in between
    assert "warnings" not in mcp or mcp["warnings"] == []
    assert _grpc_status(home, block) == ([], [])


@pytest.mark.postgres
def test_a_down_provider_is_kept_with_a_postgres_index_too(
    tmp_path: Path, switchable_server: str, pg_url: str
) -> None:
    """The same record on the second store family: a new process's `status` says the failure
    found by `index`, and a search the provider answers clears it."""
    home = make_home(tmp_path)
    block = {**_openai_block(switchable_server), "store": {"driver": "postgres"}}
    env = cli_env(home, MEMLANE_CONFIG=str(_config(home, block)))
    env["MEMLANE_STORE_URL"] = fresh_database(pg_url)
    del env["MEMLANE_PROVIDER"]

    indexed = run_cli(home, "index", env=env)
    assert indexed.returncode == 0, indexed.stderr
    hits = _Switchable.hits
    status = run_cli(home, "status", "--json", env=env)
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    assert report["storePath"].startswith("postgresql+psycopg://")
    (warning,) = report["warnings"]
    assert warning.startswith("embedding provider openai failed when last used (")
    assert _Switchable.hits == hits  # said from the record, not by asking again

    _Switchable.down = False
    searched = run_cli(home, "search", "--json", "tabs", env=env)
    assert json.loads(searched.stdout)["mode"] == "hybrid", searched.stderr
    status = run_cli(home, "status", "--json", env=env)
    assert json.loads(status.stdout)["warnings"] == []
