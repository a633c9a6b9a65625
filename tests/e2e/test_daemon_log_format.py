"""E2E: a log line a daemon-answered command writes reaches the client as the command writes it
in-process: a console line when the client's stderr is a terminal, a JSON line when it is not.

A loopback server speaks the OpenAI embeddings wire format and starts refusing the key once the
daemon has indexed; the search the client then sends fails to embed its query, which logs
`query_embedding_failed` inside the request (the daemon's own log never sees it).
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e._daemon_support import Home, make_home, start_daemon, stopped_at_end
from tests.loopback_http import QuietHandler, serving

pytestmark = pytest.mark.e2e

DIMS = 1536  # what text-embedding-3-small returns (memlane checks it)
HANG_GUARD_S = 120.0
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
EVENT = "query_embedding_failed"


@dataclass
class Server:
    url: str = ""
    refusing: bool = False


@pytest.fixture
def server() -> Iterator[Server]:
    state = Server()

    class Handler(QuietHandler):
        def do_POST(self) -> None:
            body = self.json_body()
            assert isinstance(body, dict)
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            if state.refusing:
                error = {"message": "Incorrect API key", "code": "invalid_api_key"}
                self.reply_json(401, {"error": error})
                return
            vector = [1.0] + [0.0] * (DIMS - 1)
            data = [{"index": i, "embedding": vector} for i in range(len(texts))]
            self.reply_json(200, {"object": "list", "model": body["model"], "data": data})

    with serving(Handler) as state.url:
        yield state


@pytest.fixture
def home(server: Server) -> Iterator[Home]:
    root = Path(tempfile.mkdtemp(prefix="ml", dir="/tmp"))
    made = make_home(root)
    search = {
        "provider": "openai",
        "model": "text-embedding-3-small",
        "fallback": "none",
        "remote": {"baseUrl": f"{server.url}/v1", "apiKey": "sk-test", "timeoutSeconds": 5},
        "sync": {"watchDebounceMs": 200},
    }
    made.config.write_text(json.dumps({"agents": {"defaults": {"memorySearch": search}}}))
    made.run(*made.base(), "--workspace", str(made.ws), "index", check=True)
    yield made
    shutil.rmtree(root, ignore_errors=True)


def _on_terminal(home: Home, *args: str) -> str:
    """What the command writes to stderr when stderr is a pseudo-terminal (stdout a pipe)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memlane.entrypoints", *home.base(), *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=slave,
        env=home.env,
        cwd=home.ws,
    )
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + HANG_GUARD_S
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the process closed the terminal
                    break
                if not chunk:
                    break
                seen += chunk
            elif proc.poll() is not None:
                break
        assert proc.wait(HANG_GUARD_S) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    return seen.decode(errors="replace").replace("\r\n", "\n")


def _line_with(text: str, event: str) -> str:
    lines = [line for line in text.splitlines() if event in line]
    assert lines, text
    return _ANSI.sub("", lines[0]).strip()


def _search_through_daemon(home: Home, server: Server, *, terminal: bool) -> str:
    """What a search the daemon answers writes to the client's stderr, once the key is refused
    (a pseudo-terminal or a pipe)."""
    with stopped_at_end(home):
        start_daemon(home)
        before = home.answered()
        server.refusing = True
        if terminal:
            shown = _on_terminal(home, "search", "rollback")
        else:
            done = home.run(*home.base(), "search", "rollback")
            assert done.returncode == 0, done.stderr
            shown = done.stderr
        assert home.answered() == before + 1  # the daemon answered it
    return shown


def test_a_daemon_answered_log_line_is_a_console_line_on_a_terminal(
    home: Home, server: Server
) -> None:
    line = _line_with(_search_through_daemon(home, server, terminal=True), EVENT)

    assert not line.startswith("{"), line
    assert "[warning" in line and f"{EVENT} " in line and "provider=openai" in line


def test_the_same_line_stays_json_when_the_clients_stderr_is_not_a_terminal(
    home: Home, server: Server
) -> None:
    shown = _search_through_daemon(home, server, terminal=False)

    logged = json.loads(_line_with(shown, f'"{EVENT}"'))
    assert (logged["event"], logged["provider"]) == (EVENT, "openai")
