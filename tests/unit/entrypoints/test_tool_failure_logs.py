"""Issue #32 item 5: a failing MCP tool call logs its kind and a redacted summary, never its
arguments or the traceback's locals (the tools over a fake-wired manager, the real logging)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import structlog

from memlane.application.ports.index_store import StoreError
from memlane.application.writing import WriteNote
from memlane.domain.redaction import Redactor
from memlane.entrypoints.logging import configure_logging
from memlane.entrypoints.mcp.tools import MemoryTools, run_tool
from tests.unit.application.conftest import World

KEY = "sk-proj-" + "Tn4Vb8Xc2Qw6Er0Ty5Ui9Op3As7Df1Gh"


class QuotingWriter:
    """A NoteWriter whose disk layer fails with an error quoting what it was given, as some
    libraries' errors do: an unexpected error, outside the tools' error table."""

    def write(self, path: str, data: bytes, *, append: bool, max_bytes: int) -> int:
        raise RuntimeError(f"short write of {data[:120]!r} to {path}")


@pytest.fixture(autouse=True)
def _reset_structlog() -> Iterator[None]:
    yield
    structlog.reset_defaults()


@pytest.mark.parametrize("as_json", [True, False], ids=["json", "console"])
def test_a_failing_write_carrying_a_secret_leaves_none_in_the_logs(
    capsys: pytest.CaptureFixture[str], as_json: bool
) -> None:
    world = World()
    manager = world.manager()
    tools = MemoryTools(
        manager=manager,
        write_note=WriteNote(
            writer=QuotingWriter(),
            clock=world.clock,
            refresh=manager.sync,
            redact=Redactor().redaction,
        ),
    )
    configure_logging(json=as_json, level="debug")

    payload, failed = run_tool(
        tools,
        "memory_write",
        {"text": f"OPENAI_API_KEY={KEY}\nmy key is {KEY}", "path": "memory/k.md", "redact": False},
    )

    assert failed and payload["error"] == "internal error (details in the server log)"
    logs = capsys.readouterr().err
    assert "mcp_tool_failed" in logs and "RuntimeError" in logs
    assert "short write of" in logs  # the summary says what went wrong...
    assert KEY not in logs and KEY[8:-4] not in logs  # ...without the secret
    if as_json:
        record = json.loads(logs.splitlines()[-1])
        assert record["tool"] == "memory_write" and record["error"] == "RuntimeError"
        assert all("locals" not in frame for frame in record["exception"][0]["frames"])


def test_a_tool_error_masks_a_url_password() -> None:
    """Issue #32 item 6: the error text a model reads masks URL passwords too."""
    world = World()
    manager = world.manager()

    class RefusingWriter:
        def write(self, path: str, data: bytes, *, append: bool, max_bytes: int) -> int:
            raise StoreError("cannot reach postgresql://app:Pw-for-the-model@db/prod")

    tools = MemoryTools(
        manager=manager,
        write_note=WriteNote(writer=RefusingWriter(), clock=world.clock, refresh=manager.sync),
    )

    payload, failed = run_tool(tools, "memory_write", {"text": "x"})

    assert failed
    assert payload["error"] == "index error: cannot reach postgresql://app:***@db/prod"
