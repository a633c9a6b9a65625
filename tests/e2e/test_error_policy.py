"""E2E: where the faces disagreed before the one error table (issue 31), with real parts.

gRPC `Get` answered a too-large note with INTERNAL (hiding why) and served notes while
`memorySearch.enabled` was false; the CLI called a too-large note "refused" where MCP said
"too large". Now every face gives the row of entrypoints/errors.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from memlane.application.memory import MemoryManager
from memlane.entrypoints.api import open_manager
from memlane.entrypoints.grpc.client import MemlaneClient, MemlaneRpcError
from memlane.entrypoints.grpc.server import build_server
from memlane.entrypoints.tool_payloads import memory_get_tool

pytestmark = pytest.mark.e2e

LIMIT = 10_000_000  # the memory source's per-file cap


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Team\n\nPriya owns the billing service.\n")
    line = "The nightly export copies every table to cold storage.\n"
    (ws / "memory" / "huge.md").write_text(line * (LIMIT // len(line) + 10))
    return ws


def _open(tmp_path: Path, *, enabled: bool) -> MemoryManager:
    return open_manager(
        workspace=_workspace(tmp_path),
        state_dir=tmp_path / "state",
        config={"enabled": enabled, "provider": "none"},
        env={"HOME": str(tmp_path)},
    )


def _grpc_get(manager: MemoryManager, path: str) -> MemlaneRpcError | str:
    server, port = build_server(manager)
    server.start()
    try:
        with MemlaneClient(f"127.0.0.1:{port}") as client:
            try:
                return client.get(path).text
            except MemlaneRpcError as exc:
                return exc
    finally:
        server.stop(grace=None)


@pytest.fixture
def manager(tmp_path: Path) -> Iterator[MemoryManager]:
    opened = _open(tmp_path, enabled=True)
    yield opened
    opened.close()


def test_grpc_get_of_a_too_large_note_says_so(manager: MemoryManager) -> None:
    answer = _grpc_get(manager, "memory/huge.md")

    assert isinstance(answer, MemlaneRpcError)
    assert answer.code is grpc.StatusCode.FAILED_PRECONDITION  # was INTERNAL, details hidden
    assert "memory/huge.md" in answer.details and "byte limit" in answer.details


def test_grpc_get_serves_nothing_while_memory_is_disabled(tmp_path: Path) -> None:
    manager = _open(tmp_path, enabled=False)
    try:
        answer = _grpc_get(manager, "MEMORY.md")
    finally:
        manager.close()

    assert isinstance(answer, MemlaneRpcError), answer  # was the note's text
    assert answer.code is grpc.StatusCode.FAILED_PRECONDITION
    assert "memorySearch.enabled: false" in answer.details


def test_grpc_status_says_memory_is_disabled(tmp_path: Path) -> None:
    """Status still answers with memory off (as `status` does), and says it is off."""
    manager = _open(tmp_path, enabled=False)
    server, port = build_server(manager)
    server.start()
    try:
        with MemlaneClient(f"127.0.0.1:{port}") as client:
            status = client.status()
    finally:
        server.stop(grace=None)
        manager.close()

    assert status.files == 0
    assert "memorySearch.enabled: false" in status.warnings[0]  # was an empty, healthy index


def test_the_tool_payload_and_the_cli_call_it_too_large(
    manager: MemoryManager, tmp_path: Path
) -> None:
    payload = memory_get_tool(manager, {"path": "memory/huge.md"})
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env["HOME"] = str(tmp_path)
    cli = subprocess.run(
        [sys.executable, "-m", "memlane.entrypoints", "--state-dir", str(tmp_path / "state"),
         "--workspace", str(tmp_path / "ws"), "get", "memory/huge.md"],
        capture_output=True, text=True, env=env, timeout=180, check=False,
    )  # fmt: skip

    assert str(payload["error"]).startswith("too large: memory/huge.md")
    assert "disabled" not in payload  # the call asked for too much; memory works
    assert cli.returncode == 1
    assert "Error: too large: memory/huge.md" in cli.stderr  # was "refused: ..."
