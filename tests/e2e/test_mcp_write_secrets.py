"""E2E (issue #32 items 1 and 3): what an agent writes through `memory_write` is redacted.

The real `memlane mcp` over stdio, driven line by line (JSON-RPC), with debug JSON logs on its
stderr: every secret kind of the catalogue is written through the tool, then the secrets must be
absent from the note file, the SQLite file and its WAL, search results, `memory_get` and the
server's logs. A NUL byte is refused with a clear error and leaves no note behind.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from tests.e2e._mcp_support import Home, make_home, python
from tests.secret_samples import PEM_BODY, PEM_TEXT, SAMPLES

pytestmark = pytest.mark.e2e

SENTINEL = "walrusprotocol"  # plain text that must arrive, to prove the right note was read
# The env-style assignment rule, beside the catalogue: a value no format would recognise.
ASSIGNED = "correct horse battery staple"
ASSIGNMENT = f'DB_PASSWORD="{ASSIGNED}"'
FORBIDDEN = sorted({s.secret for s in SAMPLES} | {s.middle for s in SAMPLES} | {PEM_BODY, ASSIGNED})
QUERIES = sorted({s.text.split()[0].strip("{\"'/:") for s in SAMPLES} - {""} | {SENTINEL})
NOTE = "memory/credentials.md"


class RawClient:
    """One JSON-RPC exchange at a time over the server's stdin/stdout."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self._in: IO[str] = proc.stdin
        self._out: IO[str] = proc.stdout
        self._next = 0

    def notify(self, method: str) -> None:
        self._in.write(json.dumps({"jsonrpc": "2.0", "method": method}) + "\n")
        self._in.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next += 1
        line = {"jsonrpc": "2.0", "id": self._next, "method": method, "params": params}
        self._in.write(json.dumps(line) + "\n")
        self._in.flush()
        while True:
            reply = self._out.readline()
            assert reply, "the server closed stdout"
            message: dict[str, Any] = json.loads(reply)
            if message.get("id") == self._next:
                return message

    def call(self, tool: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """The tool's payload and whether it is a tool error."""
        result = self.request("tools/call", {"name": tool, "arguments": arguments})["result"]
        return json.loads(result["content"][0]["text"]), bool(result.get("isError"))


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return make_home(tmp_path)


@pytest.fixture
def served(home: Home) -> Iterator[tuple[RawClient, subprocess.Popen[str]]]:
    """The server with debug JSON logs to `home.root/server.log`; closed (and awaited) after."""
    args = home.args()
    command = [python(), *args[:2], "--log-level", "debug", "--log-json", *args[2:]]
    with (home.root / "server.log").open("w") as log:
        proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            env=home.env(),
            cwd=home.root,
        )
        client = RawClient(proc)
        client.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        )
        client.notify("notifications/initialized")
        try:
            yield client, proc
        finally:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.close()
            proc.wait(60)
            proc.stdout.close()


def _stored_bytes(home: Home) -> bytes:
    database = home.state / "agents" / "main" / "memory.db"
    wal = database.with_name("memory.db-wal")
    return database.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def _leaks(text: str) -> list[str]:
    return [secret for secret in FORBIDDEN if secret in text]


def _search_text(client: RawClient) -> str:
    seen: list[str] = []
    for query in QUERIES:
        payload, failed = client.call("memory_search", {"query": query, "maxResults": 50})
        assert not failed, payload
        seen.append(json.dumps(payload, ensure_ascii=False))
    return "\n".join(seen)


@pytest.mark.timeout(600)
def test_every_secret_kind_written_through_the_tool_is_stored_masked(
    served: tuple[RawClient, subprocess.Popen[str]], home: Home
) -> None:
    client, proc = served
    replies: list[dict[str, Any]] = []
    texts = [*(f"{SENTINEL} {s.text}" for s in SAMPLES), PEM_TEXT, ASSIGNMENT, f"last {SENTINEL}"]
    for text in texts:
        payload, failed = client.call("memory_write", {"text": text, "path": NOTE})
        assert not failed, payload
        replies.append(payload)

    # Each secret's write says what it masked (kinds and counts), never the secret itself.
    assert all(r["redacted"] is True and r["indexed"] is True for r in replies)
    assert all(sum(r["masked"].values()) >= 1 for r in replies[:-1])
    assert replies[-1]["masked"] == {}
    assert {"assignment", "sk-dash", "url-password", "age", "pem-private-key"} <= {
        kind for r in replies for kind in r["masked"]
    }
    assert _leaks(json.dumps(replies)) == []

    note = (home.workspace / NOTE).read_text(encoding="utf-8")
    assert SENTINEL in note and "-----BEGIN OPENSSH PRIVATE KEY-----" in note
    assert _leaks(note) == []

    searched = _search_text(client)
    assert SENTINEL in searched and NOTE in searched
    assert _leaks(searched) == []

    got, failed = client.call("memory_get", {"path": NOTE})
    assert not failed and SENTINEL in got["text"]
    assert _leaks(got["text"]) == []

    stored = _stored_bytes(home)  # while the server holds the store open: the WAL too
    assert SENTINEL.encode() in stored
    assert [s for s in FORBIDDEN if s.encode() in stored] == []

    proc.stdin.close()  # type: ignore[union-attr]
    proc.wait(60)
    logs = (home.root / "server.log").read_text(encoding="utf-8")
    assert "event_handled" in logs  # debug lines were written, so their absence means something
    assert _leaks(logs) == []
    assert [s for s in FORBIDDEN if s.encode() in _stored_bytes(home)] == []


@pytest.mark.timeout(300)
def test_redact_false_writes_as_given_and_says_so(
    served: tuple[RawClient, subprocess.Popen[str]], home: Home
) -> None:
    client, _ = served
    sample = next(s for s in SAMPLES if s.pattern == "url-password")

    payload, failed = client.call(
        "memory_write", {"text": sample.text, "path": "memory/raw.md", "redact": False}
    )

    assert not failed and payload["redacted"] is False and payload["masked"] == {}
    assert sample.secret in (home.workspace / "memory" / "raw.md").read_text(encoding="utf-8")
    bad, failed = client.call("memory_write", {"text": "x", "redact": "no"})
    assert failed and "field 'redact' must be true or false" in bad["error"]


@pytest.mark.timeout(300)
def test_a_nul_byte_is_refused_with_a_clear_error_and_no_note_is_left(
    served: tuple[RawClient, subprocess.Popen[str]], home: Home
) -> None:
    client, _ = served

    payload, failed = client.call(
        "memory_write", {"text": "before\u0000after", "path": "memory/nul.md"}
    )

    assert failed
    assert payload["error"].startswith("invalid arguments: text holds a NUL byte")
    assert not (home.workspace / "memory" / "nul.md").exists()
    status, _ = client.call("memory_status", {})
    assert "memory/nul.md" not in json.dumps(status)
