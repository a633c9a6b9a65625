"""E2E (issue #32 item 4): a symlink inside the workspace is followed only to a note.

`memory/x.md -> ../.env` passes the allow-list by its name; the real `memlane mcp` (memory_get,
memory_write) and the CLI's `get` must refuse it by its target, with an error that says why,
and leave the target untouched.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult

from tests.e2e._mcp_support import Home, make_home, python

pytestmark = pytest.mark.e2e

SECRET = "OPENAI_API_KEY=sk-live-do-not-serve\n"


@pytest.fixture
def home(tmp_path: Path) -> Home:
    home = make_home(tmp_path)
    (home.workspace / ".env").write_text(SECRET)
    (home.workspace / "memory" / "env.md").symlink_to(home.workspace / ".env")
    (home.workspace / ".git").mkdir()
    (home.workspace / ".git" / "config.md").write_text("[core]\n")
    (home.workspace / "memory" / "git.md").symlink_to(home.workspace / ".git" / "config.md")
    return home


def _payload(result: CallToolResult) -> dict[str, object]:
    text = result.content[0].text  # type: ignore[union-attr]  # always a TextContent here
    payload: dict[str, object] = json.loads(text)
    return payload


def test_mcp_get_and_write_refuse_a_link_to_a_file_that_is_no_note(home: Home) -> None:
    params = StdioServerParameters(
        command=python(), args=home.args(), env=home.env(), cwd=str(home.root)
    )
    seen: dict[str, dict[str, object]] = {}

    async def main() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            for path in ("memory/env.md", "memory/git.md"):
                got = await client.call_tool("memory_get", {"path": path})
                assert got.is_error
                seen[f"get {path}"] = _payload(got)
                wrote = await client.call_tool("memory_write", {"text": "x", "path": path})
                assert wrote.is_error
                seen[f"write {path}"] = _payload(wrote)
            found = await client.call_tool("memory_search", {"query": "OPENAI_API_KEY"})
            seen["search"] = _payload(found)

    anyio.run(main)

    why = "memory/env.md: symlink target is not a .md note"
    assert str(seen["get memory/env.md"]["error"]).endswith(why)
    assert seen["write memory/env.md"]["error"] == f"refused: {why}"
    assert "hidden or tool folder" in str(seen["get memory/git.md"]["error"])
    assert "hidden or tool folder" in str(seen["write memory/git.md"]["error"])
    assert "sk-live" not in json.dumps(seen)
    assert (home.workspace / ".env").read_text() == SECRET


def test_cli_get_refuses_the_link_and_status_names_it(home: Home) -> None:
    base = [python(), "-m", "memlane.entrypoints", "--config", str(home.config)]
    where = ["--workspace", str(home.workspace), "--state-dir", str(home.state)]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*base, *where, *args],
            capture_output=True,
            text=True,
            env=home.env(),
            timeout=120,
            check=False,
        )

    got = run("get", "memory/env.md")
    assert got.returncode == 1
    assert "refused: memory/env.md: symlink target is not a .md note" in got.stderr
    assert "sk-live" not in got.stdout + got.stderr
    status = run("status", "--deep")
    assert "memory/env.md" in status.stdout and "not a .md note" in status.stdout
