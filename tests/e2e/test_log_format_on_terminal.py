"""E2E: the servers' warnings on a terminal are console lines, JSON lines only with --log-json.

`ui`, `serve` and `mcp --http` warn when they listen beyond loopback, and `mcp --http` when a
request comes without its token. Each server runs as a real process whose stderr is a
pseudo-terminal (as in a user's shell), so the format is the one chosen by configure_logging
for a terminal, whichever logger or thread writes the line.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.e2e._loud_support import cli_env, make_home
from tests.e2e.test_grpc_subprocess import _free_port

pytestmark = pytest.mark.e2e

HANG_GUARD_S = 120.0  # only ends a test whose server never writes the line
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class Terminal:
    """A server process whose stdout and stderr are one pseudo-terminal."""

    def __init__(self, proc: subprocess.Popen[bytes], master: int) -> None:
        self.proc = proc
        self._master = master
        self.seen = ""

    def line_with(self, text: str) -> str:
        """The first line written that contains `text` (waits for it)."""
        deadline = time.monotonic() + HANG_GUARD_S
        while True:
            for line in self.seen.splitlines():
                if text in line:
                    return line.strip()
            if time.monotonic() > deadline or self.proc.poll() is not None:
                pytest.fail(f"no line with {text!r}; the terminal showed:\n{self.seen[-4000:]}")
            ready, _, _ = select.select([self._master], [], [], 1.0)
            if ready:
                try:
                    self.seen += os.read(self._master, 65536).decode(errors="replace")
                except OSError:  # the process closed the terminal
                    continue


@contextmanager
def on_terminal(home: Path, *args: str) -> Iterator[Terminal]:
    master, slave = pty.openpty()
    where = ["--state-dir", str(home / "state"), "--workspace", str(home / "ws")]
    proc = subprocess.Popen(
        [sys.executable, "-m", "memlane.entrypoints", *where, *args],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
        env=cli_env(home, MEMLANE_NO_DAEMON="1"),
    )
    os.close(slave)
    try:
        yield Terminal(proc, master)
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        os.close(master)


def _is_console_line(line: str, event: str) -> bool:
    """`<time> [warning  ] <event> key=value ...` (colours aside), not a JSON object."""
    plain = _ANSI.sub("", line)
    return not plain.startswith("{") and "[warning" in plain and f"{event} " in plain


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return make_home(tmp_path)


SERVERS = {
    "ui": ("ui_insecure_listener", ("ui", "--host", "0.0.0.0")),
    "grpc": ("grpc.insecure_listener", ("serve", "--host", "0.0.0.0", "--token", "x")),
    "mcp-http": (
        "mcp_http_insecure_listener",
        ("mcp", "--http", "--host", "0.0.0.0", "--token", "x"),
    ),
}


@pytest.mark.parametrize("server", SERVERS, ids=list(SERVERS))
class TestInsecureListenerWarning:
    def _args(self, server: str) -> tuple[str, tuple[str, ...]]:
        event, args = SERVERS[server]
        return event, (*args, "--port", str(_free_port()))

    def test_is_a_console_line_on_a_terminal(self, home: Path, server: str) -> None:
        event, args = self._args(server)
        with on_terminal(home, *args) as terminal:
            line = terminal.line_with(event)

        assert _is_console_line(line, event), line

    def test_is_a_json_line_with_log_json(self, home: Path, server: str) -> None:
        event, args = self._args(server)
        with on_terminal(home, *args, "--log-json") as terminal:
            line = terminal.line_with(f'"{event}"')

        assert json.loads(line)["event"] == event


def test_a_request_without_the_token_is_warned_about_in_console_format(home: Path) -> None:
    port = _free_port()
    with on_terminal(home, "mcp", "--http", "--port", str(port), "--token", "x") as terminal:
        terminal.line_with("listening on")
        refused = _post_until_answered(f"http://127.0.0.1:{port}/mcp")
        line = terminal.line_with("mcp_http_unauthenticated")

    assert refused == 401
    assert _is_console_line(line, "mcp_http_unauthenticated"), line


def _post_until_answered(url: str) -> int:
    """The HTTP status of a POST without a token, once the server accepts connections."""
    deadline = time.monotonic() + HANG_GUARD_S
    while True:
        try:
            with urllib.request.urlopen(
                urllib.request.Request(url, b"{}", method="POST"), timeout=10
            ):
                return 200
        except urllib.error.HTTPError as exc:
            return exc.code
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
