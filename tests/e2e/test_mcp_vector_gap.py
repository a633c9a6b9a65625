"""Issue #30.3 through a real `memlane mcp` process: a client that starts one server per call
(as the MCP Inspector's CLI does) still gets vectors.

The index is built keyword-only first (`MEMLANE_PROVIDER=none`), so every chunk lacks a vector
of the bundled local model the server then runs: a small gap is embedded by the first search
before it answers, as the CLI's search does; a large one is embedded by the server from its
start, without waiting for any call.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.e2e._mcp_support import Home, make_home

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

GAP_WARNING = "answering by keywords until the vectors are embedded"


def _index_keyword_only(home: Home) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "memlane.entrypoints", "--workspace", str(home.workspace),
         "--state-dir", str(home.state), "index"],
        capture_output=True, text=True, env={**home.env(), "MEMLANE_PROVIDER": "none"},
        timeout=240, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def _params(home: Home) -> StdioServerParameters:
    # No --config: the bundled local model, which the keyword-only index has no vector of.
    return StdioServerParameters(
        command=sys.executable, args=home.args(keyword_only=False), env=home.env()
    )


def test_the_first_search_of_a_fresh_server_embeds_a_small_gap(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    _index_keyword_only(home)

    async def main() -> dict[str, object]:
        async with Client(_params(home), read_timeout_seconds=240) as client:
            result = await client.call_tool("memory_search", {"query": "who is on call?"})
            assert not result.is_error, result.content
            payload: dict[str, object] = json.loads(result.content[0].text)  # type: ignore[union-attr]
            return payload

    payload = anyio.run(main)

    assert payload["mode"] == "hybrid", payload
    assert not any(GAP_WARNING in str(w) for w in payload.get("warnings", [])), payload  # type: ignore[attr-defined]
    assert payload["results"][0]["path"] == "MEMORY.md"  # type: ignore[index]


def test_a_fresh_server_embeds_a_large_gap_without_being_asked(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    for n in range(80):  # more than a search embeds itself (SEARCH_BACKFILL_LIMIT, 64)
        note = home.workspace / "memory" / f"2026-02-{n:02d}.md"
        note.write_text(f"# Day {n}\n\nThe harbour log of day {n} mentions buoy {n * 7}.\n")
    _index_keyword_only(home)

    async def main() -> dict[str, object]:
        async with Client(_params(home), read_timeout_seconds=240) as client:
            deadline = time.monotonic() + 240
            while True:
                result = await client.call_tool("memory_status", {})
                status: dict[str, object] = json.loads(result.content[0].text)  # type: ignore[union-attr]
                vectors = status.get("vectors")
                if isinstance(vectors, dict) and vectors["done"] > 0:
                    return vectors
                assert time.monotonic() < deadline, status
                await anyio.sleep(0.5)

    vectors = anyio.run(main)

    assert 0 < vectors["done"] <= vectors["total"]  # type: ignore[operator]
