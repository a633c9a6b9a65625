"""E2E: `memlane serve` as a real process (real container, bundled model) and the real client.

Skipped only while the CLI module cannot be imported; once it can, every test here runs.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from memlane.entrypoints.grpc.client import MemlaneClient, MemlaneRpcError

try:
    import memlane.entrypoints.cli  # noqa: F401 - only whether it imports matters here

    CLI_MISSING = False
except ImportError:
    CLI_MISSING = True

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(CLI_MISSING, reason="CLI not built yet"),
]

TOKEN = "subprocess-token-5b1d"
STARTUP_SECONDS = 120.0  # the first start loads the bundled model

NOTES = {
    "MEMORY.md": (
        "# Team memory\n\n"
        "We deploy the backend every Friday afternoon after the integration tests pass.\n"
        "The on-call engineer this quarter is Priya.\n"
    ),
    "memory/2026-01-05.md": (
        "# 2026-01-05\n\n"
        "数据库从 PostgreSQL 迁移到 SQLite，因为部署更简单。\n"
        "The cafeteria closes at 3 pm on Wednesdays.\n"
    ),
}


@dataclass
class Process:
    proc: subprocess.Popen[bytes]
    port: int
    stderr: Path

    def diagnostics(self) -> str:
        return self.stderr.read_text(errors="replace")[-4000:]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _command() -> list[str]:
    script = Path(sys.executable).with_name("memlane")
    return [str(script)] if script.exists() else [sys.executable, "-m", "memlane.entrypoints"]


def _wait_serving(process: Process) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    with grpc.insecure_channel(f"127.0.0.1:{process.port}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            if process.proc.poll() is not None:
                pytest.fail(f"memlane serve exited early:\n{process.diagnostics()}")
            try:
                reply = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=1)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError:
                pass
            time.sleep(0.2)
    pytest.fail(f"memlane serve not SERVING after {STARTUP_SECONDS}s:\n{process.diagnostics()}")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Process]:
    root = tmp_path_factory.mktemp("serve")
    workspace, state, home = root / "workspace", root / "state", root / "home"
    for relative, text in NOTES.items():
        (workspace / relative).parent.mkdir(parents=True, exist_ok=True)
        (workspace / relative).write_text(text, encoding="utf-8")
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env.update(HOME=str(home), PYTHONUNBUFFERED="1")
    port = _free_port()
    stderr = root / "stderr.log"
    with stderr.open("wb") as err:
        proc = subprocess.Popen(
            [*_command(), "--workspace", str(workspace), "--state-dir", str(state),
             "serve", "--host", "127.0.0.1", "--port", str(port), "--token", TOKEN],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=root,
        )  # fmt: skip
    process = Process(proc, port, stderr)
    try:
        _wait_serving(process)
        yield process
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


@pytest.fixture(scope="module")
def client(server: Process) -> Iterator[MemlaneClient]:
    with MemlaneClient(f"127.0.0.1:{server.port}", token=TOKEN, timeout=120) as c:
        c.sync(reason="explicit")
        yield c


class TestServeProcess:
    def test_sync_indexes_the_workspace(self, client: MemlaneClient) -> None:
        """A second sync finds both notes already indexed."""
        report = client.sync()

        assert report.files_unchanged + report.files_indexed >= 2

    def test_search_in_english(self, client: MemlaneClient) -> None:
        response = client.search("When do we deploy the backend?")

        assert response.results
        assert response.results[0].path == "MEMORY.md"
        assert "Friday" in response.results[0].snippet

    def test_search_in_chinese(self, client: MemlaneClient) -> None:
        response = client.search("数据库迁移")

        assert "memory/2026-01-05.md" in [r.path for r in response.results]

    def test_get_reads_lines_and_refuses_traversal(self, client: MemlaneClient) -> None:
        got = client.get("MEMORY.md", from_line=3, lines=1)
        with pytest.raises(MemlaneRpcError) as refused:
            client.get("../../etc/passwd")

        assert "Friday" in got.text
        assert refused.value.code is grpc.StatusCode.PERMISSION_DENIED

    def test_status_counts_the_files(self, client: MemlaneClient) -> None:
        status = client.status()

        assert status.files >= 2
        assert status.chunks >= 2

    def test_events_replay_what_the_sync_did(self, client: MemlaneClient) -> None:
        stream = client.events(tail=5, timeout=30)

        first = next(stream)
        stream.close()

        assert first.position >= 1
        assert first.type

    def test_a_wrong_token_is_unauthenticated(self, server: Process) -> None:
        with MemlaneClient(f"127.0.0.1:{server.port}", token="nope") as intruder:
            with pytest.raises(MemlaneRpcError) as caught:
                intruder.status()

        assert caught.value.code is grpc.StatusCode.UNAUTHENTICATED

    def test_sigterm_stops_the_server_cleanly(self, server: Process, client: MemlaneClient) -> None:
        """Runs last in the module: the server exits 0 on SIGTERM."""
        server.proc.send_signal(signal.SIGTERM)

        code = server.proc.wait(30)

        assert code == 0, server.diagnostics()
