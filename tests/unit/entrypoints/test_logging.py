"""Unit tests: structlog configuration (renderer choice, level filter, stderr only, no secrets)."""

from __future__ import annotations

import io
import json
import logging
import sys
from collections.abc import Iterator
from datetime import datetime

import pytest
import structlog
from structlog.testing import capture_logs

from memlane.entrypoints.logging import REDACTED, configure_logging


@pytest.fixture(autouse=True)
def _reset_structlog() -> Iterator[None]:
    yield
    structlog.reset_defaults()
    structlog.contextvars.clear_contextvars()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def stderr_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    captured = capsys.readouterr()
    assert captured.out == ""
    return captured.err.splitlines()


class TestLevelFiltering:
    def test_events_below_the_level_are_dropped(self) -> None:
        configure_logging(json=True, level="warning")
        log = structlog.get_logger()

        with capture_logs() as logs:
            log.info("file indexed")
            log.warning("file skipped", reason="binary")

        assert [entry["event"] for entry in logs] == ["file skipped"]

    def test_debug_level_lets_everything_through(self) -> None:
        configure_logging(json=True, level="DEBUG")

        with capture_logs() as logs:
            structlog.get_logger().debug("probe")

        assert [entry["log_level"] for entry in logs] == ["debug"]

    def test_an_unknown_level_is_refused(self) -> None:
        with pytest.raises(ValueError, match="verbose"):
            configure_logging(level="verbose")


class TestJsonLines:
    def test_json_lines_go_to_stderr_with_level_and_utc_timestamp(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        configure_logging(json=True, level="info")

        structlog.get_logger().info("event handled", handler="ReindexFile", duration_ms=12.5)

        [line] = stderr_lines(capsys)
        record = json.loads(line)
        assert record["event"] == "event handled"
        assert record["level"] == "info"
        assert record["handler"] == "ReindexFile"
        assert record["duration_ms"] == 12.5
        stamp = datetime.fromisoformat(record["timestamp"])
        assert stamp.utcoffset() is not None
        assert stamp.utcoffset().total_seconds() == 0  # type: ignore[union-attr]

    def test_context_variables_are_merged_into_each_line(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        configure_logging(json=True, level="info")
        structlog.contextvars.bind_contextvars(agent_id="main")

        structlog.get_logger().info("sync done")

        [line] = stderr_lines(capsys)
        assert json.loads(line)["agent_id"] == "main"

    def test_exceptions_are_structured(self, capsys: pytest.CaptureFixture[str]) -> None:
        configure_logging(json=True, level="info")

        try:
            raise RuntimeError("provider down")
        except RuntimeError:
            structlog.get_logger().exception("embedding failed")

        [line] = stderr_lines(capsys)
        record = json.loads(line)
        assert record["exception"][0]["exc_type"] == "RuntimeError"

    def test_a_non_terminal_stderr_gets_json_by_default(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        configure_logging(level="info")

        structlog.get_logger().info("hello")

        [line] = stderr_lines(capsys)
        assert json.loads(line)["event"] == "hello"


class TestConsole:
    def test_a_terminal_gets_the_console_renderer(self, monkeypatch: pytest.MonkeyPatch) -> None:
        terminal = _Terminal()
        monkeypatch.setattr(sys, "stderr", terminal)
        configure_logging(level="info")

        structlog.get_logger().info("watching", files=3)

        output = terminal.getvalue()
        assert "watching" in output
        assert "files" in output
        with pytest.raises(json.JSONDecodeError):
            json.loads(output)

    def test_json_false_forces_the_console_renderer(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        configure_logging(json=False, level="info")

        structlog.get_logger().info("watching")

        [line] = stderr_lines(capsys)
        assert "watching" in line
        assert not line.startswith("{")


class TestSensitiveFields:
    def test_text_and_credentials_are_never_written(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        configure_logging(json=True, level="info")

        structlog.get_logger().info(
            "chunk embedded",
            path="memory/2026-11-03.md",
            text="the user prefers tabs",
            api_key="sk-live-123",
            Authorization="Bearer abc",
        )

        [line] = stderr_lines(capsys)
        record = json.loads(line)
        assert record["path"] == "memory/2026-11-03.md"
        assert record["text"] == record["api_key"] == record["Authorization"] == REDACTED
        assert "tabs" not in line
        assert "sk-live-123" not in line


_KEY = "sk-proj-" + "Zq8Wm3Kx7Rb2Lt5Nv9Pc4Hd6Jf1Gs0Ay"
_URL = "postgresql://app:Hunter2-secret-pw@db.internal/prod"


# Built at run time, so that only a traceback showing locals (not its source lines) holds it.
_LOCAL_ONLY = "-".join(["argument", "value", "seen", "only", "in", "locals"])


def _fail_with_secret_locals(arguments: dict[str, object]) -> None:
    text = f"OPENAI_API_KEY={_KEY}"  # a local a traceback with locals would print
    raise ValueError(f"cannot store {text!r} in {_URL}")


class TestTracebacksKeepNoSecrets:
    """Issue #32 item 5: a failure logs its kind and a redacted summary, never locals."""

    @pytest.mark.parametrize("as_json", [True, False], ids=["json", "console"])
    def test_locals_and_secrets_in_the_message_are_not_written(
        self, capsys: pytest.CaptureFixture[str], as_json: bool
    ) -> None:
        configure_logging(json=as_json, level="info")

        try:
            _fail_with_secret_locals({"text": _LOCAL_ONLY, "path": "memory/x.md"})
        except ValueError:
            structlog.get_logger().exception("mcp_tool_failed", error="ValueError")

        written = capsys.readouterr().err
        assert "mcp_tool_failed" in written and "ValueError" in written
        assert "_fail_with_secret_locals" in written  # the traceback is still there
        assert _KEY not in written and "Hunter2-secret-pw" not in written
        assert "db.internal/prod" in written  # the rest of the message stays readable
        assert _LOCAL_ONLY not in written  # no locals at all
        if as_json:
            frames = json.loads(written)["exception"][0]["frames"]
            assert all("locals" not in frame for frame in frames)

    def test_string_fields_are_redacted_too(self, capsys: pytest.CaptureFixture[str]) -> None:
        configure_logging(json=True, level="info")

        structlog.get_logger().warning("store_failed", where=_URL, detail=[f"key {_KEY}"])

        record = json.loads(capsys.readouterr().err)
        assert record["where"] == "postgresql://app:***@db.internal/prod"
        assert _KEY not in json.dumps(record)


class TestStandardLoggingIsRedactedToo:
    """Uvicorn and the MCP SDK log through the standard `logging` module: their records go
    through the same processors (redaction, renderer) as ours, at the configured level."""

    def test_a_library_record_is_rendered_and_redacted(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        configure_logging(json=True, level="warning")

        logging.getLogger("uvicorn.error").warning("bad header %s from %s", _KEY, _URL)
        logging.getLogger("httpx").info("below the level: not written %s", _KEY)

        [line] = stderr_lines(capsys)
        record = json.loads(line)
        assert record["level"] == "warning" and record["logger"] == "uvicorn.error"
        assert record["event"].startswith("bad header ")
        assert record["event"].endswith(" from postgresql://app:***@db.internal/prod")
        assert _KEY not in line and "Hunter2-secret-pw" not in line

    def test_a_library_traceback_is_redacted(self, capsys: pytest.CaptureFixture[str]) -> None:
        configure_logging(json=False, level="info")

        try:
            _fail_with_secret_locals({"text": _LOCAL_ONLY})
        except ValueError:
            logging.getLogger("mcp.server.lowlevel.server").exception("Error handling request")

        written = capsys.readouterr().err
        assert "Error handling request" in written and "_fail_with_secret_locals" in written
        assert _KEY not in written and "Hunter2-secret-pw" not in written
        assert _LOCAL_ONLY not in written

    def test_reconfiguring_keeps_one_route(self) -> None:
        configure_logging(json=True, level="info")
        configure_logging(json=True, level="debug")

        routes = [
            h for h in logging.getLogger().handlers if type(h).__name__ == "_ThroughStructlog"
        ]
        assert len(routes) == 1 and routes[0].level == logging.DEBUG
