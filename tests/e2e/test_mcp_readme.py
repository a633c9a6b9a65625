"""The README's "Use from an agent" snippets: each parses as its host reads it, and starts."""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

import anyio
import json5
import pytest
from mcp import Client, StdioServerParameters

from tests.e2e._mcp_support import Home, make_home

pytestmark = pytest.mark.e2e

README = Path(__file__).resolve().parents[2] / "README.md"
PLACEHOLDER = "/path/to/workspace"
_SNIPPET = re.compile(
    r"<!-- mcp-snippet: (?P<hosts>[\w -]+?) -->\s*```(?P<lang>\w+)\n(?P<body>.*?)```\s*"
    r"<!-- /mcp-snippet -->",
    re.DOTALL,
)


def _snippets() -> dict[str, tuple[str, str]]:
    found = {m["hosts"]: (m["lang"], m["body"]) for m in _SNIPPET.finditer(README.read_text())}
    assert found, "no mcp-snippet markers in README.md"
    return found


def _command(hosts: str, lang: str, body: str) -> list[str]:
    """The command line the host would spawn, read the way that host reads its config."""
    if lang == "sh":
        words = shlex.split(body)
        assert words[:3] == ["claude", "mcp", "add"] and "--" in words
        return words[words.index("--") + 1 :]
    config = json5.loads(body) if lang == "json5" else json.loads(body)
    if "openclaw" in hosts:
        entry = config["mcp"]["servers"]["memlane"]
    elif "vscode" in hosts:
        entry = config["servers"]["memlane"]
        assert entry["type"] == "stdio"
    else:
        entry = config["mcpServers"]["memlane"]
    return [entry["command"], *entry["args"]]


def _list_tools(home: Home, command: list[str]) -> set[str]:
    script = Path(sys.executable).with_name(command[0])  # the installed console script
    assert script.exists(), f"{command[0]} is not installed next to {sys.executable}"
    args = [str(home.workspace) if a == PLACEHOLDER else a for a in command[1:]]
    env = {**home.env(), "MEMLANE_CONFIG": str(home.config)}  # keyword-only: no model load
    params = StdioServerParameters(command=str(script), args=args, env=env, cwd=str(home.root))

    async def main() -> set[str]:
        async with Client(params, read_timeout_seconds=120) as client:
            status = await client.call_tool("memory_status", {})
            assert not status.is_error
            return {t.name for t in (await client.list_tools()).tools}

    return anyio.run(main)


@pytest.mark.parametrize("hosts", sorted(_snippets()))
def test_the_snippet_parses_and_starts_the_server(hosts: str, tmp_path: Path) -> None:
    """The command named in the snippet runs `memlane mcp` and serves the four tools."""
    lang, body = _snippets()[hosts]
    command = _command(hosts, lang, body)

    tools = _list_tools(make_home(tmp_path), command)

    assert command[0] == "memlane" and PLACEHOLDER in command
    assert tools == {"memory_search", "memory_get", "memory_write", "memory_status"}


def test_the_section_fits_one_screen() -> None:
    text = README.read_text()
    section = text[text.index("## Use from an agent") : text.index("## Configuration")]
    assert len(section.splitlines()) <= 50
