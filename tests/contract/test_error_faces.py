"""Contract: every error kind takes the same meaning on all four faces.

Each case is an exception the application raises, with the form the policy gives it written out
here by hand (not read from entrypoints/errors.py): the CLI's exit code, the gRPC status code,
and whether a tool payload says memory is unavailable (`disabled`) or that the call was wrong.
Each face is driven through its own error handling: the CLI's `errors()`, a real gRPC server and
client on 127.0.0.1, a real MCP server over the SDK's in-process client, and the Python tool
payloads; all of them must give that form and the same text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import cast

import anyio
import click
import grpc
import pytest
from mcp import Client
from mcp.types import CallToolResult

from memlane.application.mass_delete import MassDeletion, Removal
from memlane.application.memory import MemoryManager
from memlane.application.messagebus import HandlerFailure
from memlane.application.ports.embedding import (
    EmbeddingRejected,
    EmbeddingTimeout,
    EmbeddingUnavailable,
    ProviderNotConfigured,
)
from memlane.application.ports.event_log import EventLogError
from memlane.application.ports.file_source import (
    FileMissing,
    FileRefused,
    FileTooLarge,
    FileUnreadable,
)
from memlane.application.ports.index_store import StoreCorrupt, StoreReadOnly
from memlane.application.ports.note_writer import NoteWriteFailed
from memlane.application.sync_trigger import SyncFailed
from memlane.application.workspace import WorkspaceMissing
from memlane.domain.agents import AgentsNotComparable, UnknownAgent
from memlane.domain.errors import DISABLED_REASON, ConfigError, InvalidQuery, MemoryDisabled
from memlane.entrypoints.cli_options import errors
from memlane.entrypoints.grpc.client import MemlaneClient, MemlaneRpcError
from memlane.entrypoints.grpc.server import build_server as build_grpc
from memlane.entrypoints.mcp.server import build_server as build_mcp
from memlane.entrypoints.mcp.tools import MemoryTools
from memlane.entrypoints.tool_payloads import memory_get_tool, memory_search_tool
from tests.fakes.failing_manager import FailingManager


@dataclass(frozen=True)
class Case:
    error: Exception
    cli_exit: int
    grpc_code: str
    unavailable: bool  # memory off or broken: `disabled`; else the call was wrong or refused
    label: str  # what the text starts with on every face ("" none)


_FAILURE = HandlerFailure("IndexFile", "file_changed", 7, "memory/a.md", "OSError: disk full")
CASES = [
    Case(MemoryDisabled(DISABLED_REASON), 0, "FAILED_PRECONDITION", True, ""),
    Case(InvalidQuery("query required"), 2, "INVALID_ARGUMENT", False, "invalid arguments"),
    Case(
        UnknownAgent("ops", store="the store", known=["main"]),
        2,
        "INVALID_ARGUMENT",
        False,
        "invalid arguments",
    ),
    Case(AgentsNotComparable("models differ"), 2, "INVALID_ARGUMENT", False, "invalid arguments"),
    Case(ConfigError("maxResults", "out of range"), 2, "INVALID_ARGUMENT", False, "invalid arguments"),
    Case(WorkspaceMissing("ws-gone", recorded=True), 1, "FAILED_PRECONDITION", True, ""),
    Case(FileRefused("../x.md", "outside the memory files"), 1, "PERMISSION_DENIED", False, "refused"),
    Case(FileMissing("memory/x.md", "no such file"), 1, "NOT_FOUND", False, "not found"),
    Case(
        FileTooLarge("memory/big.md", "11000000 bytes exceeds the 10000000-byte limit"),
        1,
        "FAILED_PRECONDITION",
        False,
        "too large",
    ),
    Case(FileUnreadable("memory/x.md", "permission denied"), 1, "FAILED_PRECONDITION", False, "file error"),
    Case(NoteWriteFailed("memory/x.md", "disk full"), 1, "FAILED_PRECONDITION", False, "file error"),
    Case(EmbeddingTimeout("no answer in 30 s"), 1, "DEADLINE_EXCEEDED", True, "embedding provider failed"),
    Case(EmbeddingUnavailable("HTTP 503"), 1, "UNAVAILABLE", True, "embedding provider failed"),
    Case(EmbeddingRejected("HTTP 400"), 1, "FAILED_PRECONDITION", True, "embedding provider failed"),
    Case(ProviderNotConfigured("no key"), 1, "FAILED_PRECONDITION", True, "embedding provider failed"),
    Case(StoreCorrupt("file is not a database"), 1, "INTERNAL", True, "index error"),
    Case(StoreReadOnly("read-only file system"), 1, "INTERNAL", True, "index error"),
    Case(EventLogError("disk I/O error"), 1, "INTERNAL", True, "index error"),
    Case(SyncFailed([_FAILURE]), 1, "INTERNAL", True, "sync failed"),
    Case(
        MassDeletion([Removal("memory", 5, 5)], limit=20.0, workspace="ws"),
        1,
        "FAILED_PRECONDITION",
        False,
        "",
    ),
]  # fmt: skip


def _text(case: Case) -> str:
    return f"{case.label}: {case.error}" if case.label else str(case.error)


@pytest.fixture(params=CASES, ids=lambda c: type(c.error).__name__)
def case(request: pytest.FixtureRequest) -> Case:
    return cast(Case, request.param)


def _manager(case: Case) -> MemoryManager:
    return cast(MemoryManager, FailingManager(case.error))


# ------------------------------------------------------------------------------ the faces


def test_cli(case: Case, capsys: pytest.CaptureFixture[str]) -> None:
    """The exit code, and the stderr line: the shared text (a usage error shows the message)."""
    with pytest.raises((click.ClickException, click.exceptions.Exit)) as raised:
        with errors():
            raise case.error
    failure = raised.value
    if isinstance(failure, click.exceptions.Exit):
        assert failure.exit_code == case.cli_exit == 0
        assert _text(case) in capsys.readouterr().err
        return
    assert isinstance(failure, click.ClickException)
    assert failure.exit_code == case.cli_exit
    shown = failure.format_message()
    if case.cli_exit == 2:  # click's usage error: the message under the usage line
        assert shown == str(case.error)
    else:
        assert shown.startswith(_text(case))


@pytest.fixture(scope="module")
def grpc_calls() -> dict[str, MemlaneRpcError]:
    """Search and Get of a real server over each case's manager, with the real client."""
    found: dict[str, MemlaneRpcError] = {}
    for one in CASES:
        server, port = build_grpc(FailingManager(one.error))
        server.start()
        try:
            with MemlaneClient(f"127.0.0.1:{port}") as client:
                for name, call in (("search", lambda: client.search("q")),
                                   ("get", lambda: client.get("MEMORY.md"))):  # fmt: skip
                    with pytest.raises(MemlaneRpcError) as raised:
                        call()
                    found[f"{type(one.error).__name__}/{name}"] = raised.value
        finally:
            server.stop(grace=None)
    return found


@pytest.mark.parametrize("rpc", ["search", "get"])
def test_grpc(case: Case, rpc: str, grpc_calls: dict[str, MemlaneRpcError]) -> None:
    """The status code; the message in the details (the code carries the kind)."""
    failure = grpc_calls[f"{type(case.error).__name__}/{rpc}"]
    assert failure.code is grpc.StatusCode[case.grpc_code]
    assert failure.details == str(case.error)


def _mcp_call(case: Case, tool: str, args: dict[str, object]) -> CallToolResult:
    tools = MemoryTools(manager=_manager(case), write_note=None)
    tools.first_sync.set()
    results: list[CallToolResult] = []

    async def main() -> None:
        async with Client(build_mcp(tools, list)) as client:
            results.append(await client.call_tool(tool, args))

    anyio.run(main)
    return results[0]


@pytest.mark.parametrize(
    ("tool", "args"), [("memory_search", {"query": "q"}), ("memory_get", {"path": "MEMORY.md"})]
)
def test_mcp(case: Case, tool: str, args: dict[str, object]) -> None:
    """A tool error whose text is the shared one; `disabled` exactly when memory is off/broken;
    a wrong call lists the fields the tool expects."""
    result = _mcp_call(case, tool, args)
    payload = json.loads(result.content[0].text)  # type: ignore[union-attr]
    assert result.is_error is True
    assert payload["error"] == _text(case)
    assert payload.get("disabled", False) is case.unavailable
    assert ("expected" in payload) is (case.cli_exit == 2)


def test_tool_payloads(case: Case) -> None:
    """The Python tool payloads: the same text, `disabled` exactly when memory is off/broken."""
    found = memory_search_tool(_manager(case), {"query": "q"})
    got = memory_get_tool(_manager(case), {"path": "MEMORY.md"})
    for payload in (found, got):
        assert payload["error"] == _text(case)
        assert payload.get("disabled", False) is case.unavailable
    assert found["results"] == [] and got["text"] == ""


def test_python_api_raises_the_error_itself(case: Case) -> None:
    """`memlane.open` callers get the application's exception, unchanged."""
    with pytest.raises(type(case.error)) as raised:
        _manager(case).search("q")
    assert raised.value is case.error


class TestUnexpected:
    """A bug: hidden on every face (no exception text leaks), memory reported broken."""

    def test_grpc_hides_it(self) -> None:
        server, port = build_grpc(FailingManager(RuntimeError("secret detail")))
        server.start()
        try:
            with (
                MemlaneClient(f"127.0.0.1:{port}") as client,
                pytest.raises(MemlaneRpcError) as raised,
            ):
                client.search("q")
        finally:
            server.stop(grace=None)
        assert raised.value.code is grpc.StatusCode.INTERNAL
        assert "secret detail" not in raised.value.details

    def test_mcp_hides_it(self) -> None:
        case = Case(RuntimeError("secret detail"), 1, "INTERNAL", True, "")
        result = _mcp_call(case, "memory_search", {"query": "q"})
        payload = json.loads(result.content[0].text)  # type: ignore[union-attr]
        assert result.is_error is True and payload["disabled"] is True
        assert payload["error"] == "internal error (details in the server log)"

    def test_cli_lets_it_through(self) -> None:
        with pytest.raises(RuntimeError), errors():
            raise RuntimeError("a bug")
