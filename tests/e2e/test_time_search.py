"""Time-aware search end to end: every hit says when it was written, and `since` / `until`
filter it, through the real CLI, the Python API and tool payload, and `memlane mcp` over stdio
(gRPC: tests/e2e/test_grpc_calls.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

import memlane
from memlane.application.memory import MemoryManager
from memlane.domain.errors import InvalidQuery
from memlane.entrypoints.tool_payloads import memory_search_tool
from tests.e2e import _mcp_support
from tests.e2e._loud_support import make_home, no_traceback
from tests.e2e._loud_support import memlane as run_cli

pytestmark = pytest.mark.e2e

NOTES = {
    "memory/2026-11-10.md": "# Standup\n\nThe retry policy is exponential backoff now.\n",
    "memory/2026-10-01.md": "# Standup\n\nThe retry policy is a fixed delay.\n",
    "memory/log.md": "# Log\n\n## 17 Nov 2026\n\nWe revisited the retry policy.\n",
}
NOV_10 = "2026-11-10T00:00:00Z/2026-11-10T23:59:59Z"
NOV_17 = "2026-11-17T00:00:00Z/2026-11-17T23:59:59Z"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return make_home(tmp_path, NOTES)


@pytest.fixture
def manager(home: Path) -> Iterator[MemoryManager]:
    opened = memlane.open(
        workspace=home / "ws", state_dir=home / "state", config={"provider": "none"}
    )
    opened.sync()
    yield opened
    opened.close()


class TestCli:
    def test_json_hits_carry_their_time_and_the_window_filters(self, home: Path) -> None:
        everything = run_cli(home, "search", "--json", "retry policy")
        window = run_cli(
            home, "search", "--json", "retry policy", "--since", "2026-11-01", "--until",
            "2026-11-15",
        )  # fmt: skip

        assert everything.returncode == 0 and window.returncode == 0, window.stderr
        times = {r["path"]: r["time"] for r in json.loads(everything.stdout)["results"]}
        assert times["memory/2026-11-10.md"] == NOV_10
        assert times["memory/log.md"] == NOV_17
        assert [r["path"] for r in json.loads(window.stdout)["results"]] == ["memory/2026-11-10.md"]

    def test_text_shows_the_time_and_explain_the_time_words(self, home: Path) -> None:
        done = run_cli(
            home, "search", "retry policy last week", "--explain", "--as-of", "2026-11-20"
        )

        assert done.returncode == 0, done.stderr
        assert 'time words: "last week" → 2026-11-09..2026-11-15' in done.stdout
        assert f"memory/2026-11-10.md:1-3 {NOV_10}" in done.stdout
        assert "time=1.000" in done.stdout

    def test_an_unreadable_since_exits_2_before_touching_the_index(self, home: Path) -> None:
        done = run_cli(home, "search", "retry", "--since", "last tuesday")

        assert done.returncode == 2
        assert "--since" in done.stderr and "not a time" in done.stderr
        assert no_traceback(done)
        assert not (home / "state" / "agents").exists()

    def test_a_relative_since_keeps_recent_memories(self, home: Path) -> None:
        # The notes' dates are in the past of any run of this test: 1d holds none of them.
        done = run_cli(home, "search", "--json", "retry policy", "--since", "1d")

        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["results"] == []

    def test_undated_text_beside_a_dated_section_is_found_by_its_own_time(self, home: Path) -> None:
        """The preferences, undated, were written now (the mtime): they took the section's
        day, 17 Nov, and `--since 1d` missed them."""
        (home / "ws" / "MEMORY.md").write_text(
            "# Long-term memory\n\n## Preferences\nThe user prefers dark mode.\n\n"
            "## 2026-11-17\nWe decided the rollback uses blue-green.\n",
            encoding="utf-8",
        )

        recent = run_cli(home, "search", "--json", "dark mode", "--since", "1d")
        dated = run_cli(home, "search", "--json", "blue-green", "--until", "2026-11-17")

        assert recent.returncode == 0, recent.stderr
        assert [r["path"] for r in json.loads(recent.stdout)["results"]] == ["MEMORY.md"]
        assert [r["path"] for r in json.loads(dated.stdout)["results"]] == ["MEMORY.md"]
        assert json.loads(dated.stdout)["results"][0]["time"].startswith("2026-11-17T00:00:00Z/")


class TestPythonApi:
    def test_search_filters_and_dates(self, manager: MemoryManager) -> None:
        response = manager.search("retry policy", since="2026-11-16", until="2026-11-30")

        assert [(r.path, r.time) for r in response.results] == [("memory/log.md", NOV_17)]

    def test_an_empty_window_is_refused(self, manager: MemoryManager) -> None:
        with pytest.raises(InvalidQuery, match="empty"):
            manager.search("retry policy", since="2026-11-30", until="2026-11-01")

    def test_the_tool_payload_carries_time_and_takes_the_window(
        self, manager: MemoryManager
    ) -> None:
        payload = memory_search_tool(
            manager, {"query": "retry policy", "since": "2026-11-01", "until": "2026-11-12"}
        )
        refused = memory_search_tool(manager, {"query": "retry policy", "since": ["x"]})

        assert [(r["path"], r["time"]) for r in payload["results"]] == [  # type: ignore[attr-defined]
            ("memory/2026-11-10.md", NOV_10)
        ]
        assert "disabled" not in refused and "since" in str(refused["error"])
        assert str(refused["error"]).startswith("invalid arguments")


def test_mcp_memory_search_takes_since_and_returns_time(tmp_path: Path) -> None:
    mcp_home = _mcp_support.make_home(tmp_path)
    for name, text in NOTES.items():
        (mcp_home.workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (mcp_home.workspace / name).write_text(text, encoding="utf-8")
    params = StdioServerParameters(
        command=_mcp_support.python(),
        args=mcp_home.args(),
        env=mcp_home.env(),
        cwd=str(mcp_home.root),
    )
    payloads: list[dict[str, object]] = []

    async def main() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            for args in (
                {"query": "retry policy", "since": "2026-11-01", "until": "2026-11-12"},
                {"query": "retry policy", "since": "yesterday-ish"},
            ):
                result = await client.call_tool("memory_search", args)
                payloads.append(json.loads(result.content[0].text))  # type: ignore[union-attr]

    anyio.run(main)
    found, refused = payloads
    assert [(r["path"], r["time"]) for r in found["results"]] == [  # type: ignore[attr-defined]
        ("memory/2026-11-10.md", NOV_10)
    ]
    assert "disabled" not in refused and "since" in str(refused["error"])
    assert str(refused["error"]).startswith("invalid arguments")
