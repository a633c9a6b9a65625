"""E2E: `memlane mcp` spawned over stdio and driven by the MCP SDK's own client.

The keyword-only config keeps these fast; `TestDefaultModel` runs the bundled local model once.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult

from tests.e2e._mcp_support import Home, make_home, python

pytestmark = pytest.mark.e2e

Scenario = Callable[[Client], Awaitable[None]]


def _run(home: Home, scenario: Scenario, *extra: str, keyword_only: bool = True) -> None:
    params = StdioServerParameters(
        command=python(),
        args=home.args(*extra, keyword_only=keyword_only),
        env=home.env(),
        cwd=str(home.root),
    )

    async def main() -> None:
        async with Client(params, read_timeout_seconds=240) as client:
            await scenario(client)

    anyio.run(main)


def _payload(result: CallToolResult) -> dict[str, object]:
    """The JSON text the model reads; structured content must say the same."""
    text = result.content[0].text  # type: ignore[union-attr]  # always a TextContent here
    payload: dict[str, object] = json.loads(text)
    assert result.structured_content == payload
    return payload


async def _search(client: Client, query: str) -> dict[str, object]:
    """Search until the first sync has finished (its warning is gone)."""
    payload: dict[str, object] = {}
    for _ in range(100):
        payload = _payload(await client.call_tool("memory_search", {"query": query}))
        if "warnings" not in payload:
            return payload
        await anyio.sleep(0.2)
    raise AssertionError(f"the first sync never finished: {payload}")


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return make_home(tmp_path)


class TestStdioServer:
    def test_tools_and_resources_are_listed(self, home: Home) -> None:
        """Four tools with model-facing descriptions; the memory notes as memlane:// resources."""

        async def scenario(client: Client) -> None:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == {"memory_search", "memory_get", "memory_write", "memory_status"}
            assert "cite" in (tools["memory_search"].description or "").lower()
            assert tools["memory_search"].input_schema["required"] == ["query"]
            assert tools["memory_get"].annotations.read_only_hint  # type: ignore[union-attr]

            resources = (await client.list_resources()).resources
            uris = [str(r.uri) for r in resources]
            assert uris == ["memlane://notes/MEMORY.md", "memlane://notes/memory/2026-01-05.md"]
            read = await client.read_resource("memlane://notes/memory/2026-01-05.md")
            assert "PostgreSQL" in read.contents[0].text  # type: ignore[union-attr]
            with pytest.raises(MCPError):
                await client.read_resource("memlane://memory/../outside.md")

        _run(home, scenario)

    def test_a_resource_uri_names_the_note_once_and_old_uris_still_read(self, home: Home) -> None:
        """`memlane://notes/<path>`: no `memory/memory/` for a daily note (issue 29); the
        `memlane://memory/<path>` URIs of earlier versions, kept by clients, still read."""

        async def scenario(client: Client) -> None:
            listed = {r.name: str(r.uri) for r in (await client.list_resources()).resources}
            new = await client.read_resource(listed["memory/2026-01-05.md"])
            old = await client.read_resource("memlane://memory/memory/2026-01-05.md")
            assert "memory/memory" not in " ".join(listed.values())
            assert listed["memory/2026-01-05.md"] == "memlane://notes/memory/2026-01-05.md"
            assert new.contents[0].text == old.contents[0].text  # type: ignore[union-attr]
            assert "PostgreSQL" in old.contents[0].text  # type: ignore[union-attr]
            with pytest.raises(MCPError):
                await client.read_resource("memlane://notes/../outside.md")
            with pytest.raises(MCPError):
                await client.read_resource("memlane://other/MEMORY.md")

        _run(home, scenario)

    def test_search_in_english_and_chinese_then_get_a_note_and_a_transcript_hit(
        self, home: Home
    ) -> None:
        """Hits carry path, lines, score, snippet, source and citation; get reads both kinds."""

        async def scenario(client: Client) -> None:
            english = await _search(client, "who is the on-call engineer")
            hit = english["results"][0]  # type: ignore[index]
            assert hit["path"] == "MEMORY.md" and hit["citation"].startswith("MEMORY.md#L")
            assert {"startLine", "endLine", "score", "snippet", "source"} <= set(hit)

            chinese = await _search(client, "数据库迁移")
            assert chinese["results"][0]["path"] == "memory/2026-01-05.md"  # type: ignore[index]

            note = _payload(
                await client.call_tool("memory_get", {"path": "MEMORY.md", "from": 4, "lines": 1})
            )
            assert note["text"] == "The on-call engineer this quarter is Priya."

            transcript = await _search(client, "migration window Saturday")
            session = next(r for r in transcript["results"] if r["source"] == "sessions")  # type: ignore[attr-defined]
            got = _payload(
                await client.call_tool(
                    "memory_get",
                    {
                        "path": session["path"],
                        "from": session["startLine"],
                        "lines": session["endLine"] - session["startLine"] + 1,
                    },
                )
            )
            assert "Assistant: The migration window is Saturday" in str(got["text"])

        _run(home, scenario)

    def test_write_then_search_finds_it_and_refusals_are_tool_errors(self, home: Home) -> None:
        """The write is indexed before the tool returns; bad paths never crash the server."""

        async def scenario(client: Client) -> None:
            await _search(client, "warm-up")
            written = _payload(
                await client.call_tool(
                    "memory_write", {"text": "The staging VPN rotates keys on the first Monday."}
                )
            )
            assert str(written["path"]).startswith("memory/20") and written["indexed"] is True
            found = _payload(await client.call_tool("memory_search", {"query": "staging VPN"}))
            assert found["results"][0]["path"] == written["path"]  # type: ignore[index]

            outside = await client.call_tool(
                "memory_write", {"text": "x", "path": "notes/escape.md"}
            )
            assert outside.is_error and "refused" in _payload(outside)["error"]  # type: ignore[operator]
            # the advice of writing (MEMORY.md or memory/<name>.md), not of reading
            assert "memory/<name>.md" in str(_payload(outside)["action"])
            assert "sessions/" not in str(_payload(outside)["action"])
            escape = await client.call_tool("memory_get", {"path": "../outside.md"})
            refused = _payload(escape)
            assert escape.is_error and str(refused["error"]).startswith("refused: ")
            assert "disabled" not in refused  # a refused path is the call's fault
            other = await client.call_tool(
                "memory_search", {"query": "x", "agents": ["main", "ops"]}
            )
            assert other.is_error and "'ops'" in str(_payload(other)["error"])

            status = _payload(await client.call_tool("memory_status", {}))
            assert status["agentId"] == "main" and status["firstSyncDone"] is True

        _run(home, scenario)
        assert not (home.root / "notes").exists()

    def test_unknown_tools_and_oversized_arguments_are_protocol_errors(self, home: Home) -> None:
        async def scenario(client: Client) -> None:
            with pytest.raises(MCPError, match="Unknown tool"):
                await client.call_tool("memory_delete", {})
            with pytest.raises(MCPError, match="limit"):
                await client.call_tool("memory_search", {"query": "x" * 300_000})
            assert _payload(await client.call_tool("memory_status", {}))["agentId"] == "main"

        _run(home, scenario)

    def test_read_only_offers_no_write(self, home: Home) -> None:
        async def scenario(client: Client) -> None:
            names = {t.name for t in (await client.list_tools()).tools}
            assert "memory_write" not in names
            with pytest.raises(MCPError, match="read-only"):
                await client.call_tool("memory_write", {"text": "x"})

        _run(home, scenario, "--read-only")
        assert not (home.workspace / "memory").joinpath("x.md").exists()


class TestArgumentMistakes:
    """Issue 30 item 3, issue 32 item 7: a wrong call is a tool error that says what was wrong
    and the fields the tool expects, never `disabled`; no tool text shows a host path."""

    def test_wrong_arguments_are_tool_errors_with_the_expected_fields(self, home: Home) -> None:
        texts: list[str] = []
        found: dict[str, dict[str, object]] = {}

        async def call(client: Client, name: str, label: str, args: dict[str, object]) -> None:
            result = await client.call_tool(name, args)
            texts.append(result.content[0].text)  # type: ignore[union-attr]
            assert result.is_error, (label, result)
            found[label] = _payload(result)

        async def scenario(client: Client) -> None:
            await _search(client, "warm-up")
            await call(
                client, "memory_write", "content", {"content": "remember the VPN key rotation"}
            )
            await call(client, "memory_write", "mode", {"text": "x", "mode": "overwrite"})
            await call(client, "memory_search", "type", {"query": "deploy", "maxResults": "5"})
            await call(client, "memory_search", "missing", {"maxResults": 3})
            await call(client, "memory_search", "agent", {"query": "deploy", "agents": ["ops"]})
            await call(client, "memory_get", "lines", {"path": "MEMORY.md", "lines": "all"})
            tools = (await client.list_tools()).tools
            texts.extend(t.description or "" for t in tools)
            texts.append(json.dumps(_payload(await client.call_tool("memory_status", {}))))

        _run(home, scenario)
        for label, payload in found.items():
            assert "disabled" not in payload and "unavailable" not in payload, (label, payload)
            assert str(payload["error"]).startswith("invalid arguments: "), (label, payload)
            assert isinstance(payload["expected"], dict), (label, payload)
        content = found["content"]
        assert "unknown field 'content'" in str(content["error"])
        assert "missing required field 'text'" in str(content["error"])
        expected = content["expected"]
        assert isinstance(expected, dict) and set(expected) == {"text", "path", "mode", "redact"}
        assert "required" in expected["text"]
        assert "'append', 'replace'" in str(found["mode"]["error"])
        assert "field 'maxResults' must be an integer, not a string" in str(found["type"]["error"])
        assert "missing required field 'query'" in str(found["missing"]["error"])
        assert "unknown agent 'ops'" in str(found["agent"]["error"])
        assert "field 'lines' must be an integer" in str(found["lines"]["error"])
        assert not (home.workspace / "memory").joinpath("x.md").exists()
        for text in texts:  # no host path: the workspace, the state dir, the home folder
            assert str(home.root) not in text, text
        assert not any("unavailable" in t.lower() for t in texts[: len(found)])

    def test_memory_really_off_is_disabled(self, home: Home) -> None:
        """`disabled` is kept for memory that is off (or broken), and status says it is off."""
        home.config.write_text(
            "{agents: {defaults: {memorySearch: {enabled: false, provider: 'none'}}}}",
            encoding="utf-8",
        )
        got: list[CallToolResult] = []

        async def scenario(client: Client) -> None:
            got.append(await client.call_tool("memory_search", {"query": "deploy"}))
            got.append(await client.call_tool("memory_get", {"path": "MEMORY.md"}))
            got.append(await client.call_tool("memory_status", {}))

        _run(home, scenario)
        search, read, status = (_payload(r) for r in got)
        assert got[0].is_error and search["disabled"] is True
        assert "memorySearch.enabled: false" in str(search["error"])
        assert got[1].is_error and read["disabled"] is True and read["text"] == ""
        assert not got[2].is_error and status["enabled"] is False


class TestRawStdio:
    def test_stdout_carries_only_json_rpc_and_bad_lines_get_protocol_errors(
        self, home: Home
    ) -> None:
        """Not JSON → -32700, JSON but no JSON-RPC → -32600, both with a null id."""
        lines = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            "this is not json",
            {"hello": "world"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        ]  # fmt: skip
        text = "".join((ln if isinstance(ln, str) else json.dumps(ln)) + "\n" for ln in lines)

        proc = subprocess.Popen(
            [python(), *home.args()],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=home.env(),
            cwd=home.root,
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(text)
        proc.stdin.flush()
        replies: list[dict[str, object]] = []
        try:
            while not any(r.get("id") == 2 for r in replies):
                line = proc.stdout.readline()
                assert line, "the server closed stdout before answering tools/list"
                replies.append(json.loads(line))  # every line on stdout is JSON
        finally:
            proc.stdin.close()
            proc.wait(60)
            proc.stdout.close()

        assert all(r.get("jsonrpc") == "2.0" for r in replies)
        errors = [r["error"]["code"] for r in replies if "error" in r and r["id"] is None]  # type: ignore[index]
        assert errors == [-32700, -32600]
        listed: dict[str, Any] = next(r for r in replies if r.get("id") == 2)
        assert len(listed["result"]["tools"]) == 4


class TestDefaultModel:
    @pytest.mark.slow
    def test_the_bundled_local_model_serves_hybrid_search(self, home: Home) -> None:
        """No config: the default local provider embeds the notes and answers by meaning."""

        async def scenario(client: Client) -> None:
            payload = await _search(client, "who is on call when production breaks")
            assert payload["provider"] == "local" and payload["mode"] == "hybrid"
            assert payload["results"][0]["path"] == "MEMORY.md"  # type: ignore[index]
            # The relevance floor is opt-in (session 9): a question the notes hold nothing
            # about keeps its hits, marked: its words match no note, so the legs disagree
            # (session 22; the legs' agreement needs no background, which two notes lack).
            foreign = await _search(client, "what is the boiling point of tungsten in kelvin")
            assert foreign["results"] and foreign["noStrongMatch"] is True
            assert all("confidence" in hit for hit in foreign["results"])  # type: ignore[attr-defined]

        _run(home, scenario, keyword_only=False)


def _keys(value: object, prefix: str = "") -> set[str]:
    """Every key path of a JSON value (list items share their list's path)."""
    if isinstance(value, dict):
        found: set[str] = set()
        for key, item in value.items():
            found |= {prefix + key} | _keys(item, f"{prefix}{key}.")
        return found
    if isinstance(value, list):
        return set().union(*(_keys(item, prefix) for item in value)) if value else set()
    return set()


# What only one side has: the CLI adds where its config came from, the server its first sync.
CLI_ONLY = {"configPath", "referenceStateDir", "sessionsDir", "ignoredKeys", "settings", "daemon"}
MCP_ONLY = {"firstSyncDone"}


class TestStatusCasing:
    def test_memory_status_is_keyed_like_status_json(self, home: Home) -> None:
        """One casing (issue 15 item 10): the tool's keys are the CLI's, at every depth."""
        payloads: list[dict[str, object]] = []

        async def scenario(client: Client) -> None:
            await _search(client, "tabs")  # the first sync has finished
            payloads.append(_payload(await client.call_tool("memory_status", {"deep": True})))

        _run(home, scenario)
        cli = subprocess.run(
            [python(), *home.args()[:-1], "status", "--json", "--deep"],
            capture_output=True, text=True, env=home.env(), cwd=str(home.root), check=True,
        )  # fmt: skip
        cli_payload = json.loads(cli.stdout)
        tool = payloads[0]
        # Top level: the same keys. Below it, the same keys wherever both hold a value (the
        # server has synced in this process, so its `lastSync` is set; the CLI's is null).
        both = [k for k in tool if tool[k] is not None and cli_payload.get(k) is not None]

        assert not any("_" in key for key in _keys(tool)), sorted(_keys(tool))
        assert set(tool) - MCP_ONLY == set(cli_payload) - CLI_ONLY
        assert {"agentId", "bySource", "enabled"} <= set(tool)
        for key in both:
            assert _keys(tool[key]) == _keys(cli_payload[key]), key
