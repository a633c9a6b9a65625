"""Item 14.6: an explicitly configured provider that cannot run is never silent.

A real HTTP server on 127.0.0.1 answers every embedding request with 500 (or nothing listens at
all); `index`, `search`, `status`, the tool payload and the gRPC server all say so in one line,
and within the cool-down the server is not asked again. `provider: "none"` stays silent.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import memlane
from memlane.entrypoints.api import memory_search_tool
from memlane.entrypoints.grpc.client import MemlaneClient
from memlane.entrypoints.grpc.server import build_server
from tests.e2e._loud_support import cli_env, make_home, no_traceback
from tests.e2e._loud_support import memlane as run_cli

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


@pytest.mark.parametrize("server", ["failing_server", "closed_port_url"], ids=["500", "refused"])
def test_index_search_and_status_warn_in_every_process(
    tmp_path: Path, server: str, request: pytest.FixtureRequest
) -> None:
    home = make_home(tmp_path)
    config = _config(home, _openai_block(request.getfixturevalue(server)))
    env = cli_env(home, MEMLANE_CONFIG=str(config))
    del env["MEMLANE_PROVIDER"]

    indexed = run_cli(home, "index", env=env)
    assert indexed.returncode == 0, indexed.stderr
    assert "2 file(s) indexed" in indexed.stdout  # keyword indexing went on
    (warning,) = _warnings(indexed.stderr)
    assert warning.startswith("warning: embedding provider openai failed (")

    searched = run_cli(home, "search", "--json", "tabs", env=env)
    assert searched.returncode == 0, searched.stderr
    payload = json.loads(searched.stdout)
    assert payload["mode"] == "keyword"
    assert payload["results"][0]["path"] == "MEMORY.md"  # nothing lost
    (warning,) = _warnings(searched.stderr)
    assert payload["warnings"] == [warning.removeprefix("warning: ")]
    assert no_traceback(indexed) and no_traceback(searched)


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
