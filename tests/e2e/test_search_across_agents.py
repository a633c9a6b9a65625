"""E2E: `search --agents a,b` over a shared store, through the real CLI (SQLite state dir and
PostgreSQL), the real gRPC server and the real MCP stdio server, with the bundled model.

Two agents with their own workspaces: `alpha` knows about deployments, `beta` about the
database migration. Each indexes its own workspace; alpha's process searches both.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import grpc
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult

import memlane
from memlane.adapters.store.database import SqliteDatabase
from memlane.entrypoints.grpc.client import MemlaneClient, MemlaneRpcError
from tests.e2e.test_grpc_subprocess import TOKEN, Process, _command, _free_port, _wait_serving
from tests.pg_server import fresh_database

pytestmark = pytest.mark.e2e

ALPHA = {
    "MEMORY.md": (
        "# Alpha memory\n\nWe deploy the backend every Friday afternoon after the integration "
        "tests pass.\nThe on-call engineer this quarter is Priya.\n"
    ),
}
BETA = {
    "MEMORY.md": (
        "# Beta memory\n\nThe database migration from MySQL to PostgreSQL runs on Saturday "
        "night; the schema freeze starts on Thursday.\n"
    ),
    "memory/2026-02-01.md": "# 2026-02-01\n\nThe cafeteria closes at 3 pm on Wednesdays.\n",
}


@dataclass(frozen=True)
class Shared:
    """A state dir (or PostgreSQL database) holding two agents, each with its own workspace."""

    root: Path
    env: dict[str, str]
    driver: str

    def args(self, agent: str, *extra: str) -> list[str]:
        return [
            "--config", str(self.root / "config.json5"), "--state-dir", str(self.root / "state"),
            "--agent", agent, "--workspace", str(self.root / agent), *extra,
        ]  # fmt: skip

    def run(self, agent: str, *extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "memlane.entrypoints", *self.args(agent, *extra)],
            capture_output=True, text=True, env=self.env, timeout=300, check=False,
        )  # fmt: skip

    def search(self, agent: str, query: str, *extra: str) -> dict[str, object]:
        done = self.run(agent, "search", query, "--json", *extra)
        assert done.returncode == 0, done.stderr
        payload: dict[str, object] = json.loads(done.stdout)
        return payload


def _make(root: Path, driver: str, pg_url: str | None) -> Shared:
    for agent, notes in (("alpha", ALPHA), ("beta", BETA)):
        for relative, text in notes.items():
            (root / agent / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / agent / relative).write_text(text, encoding="utf-8")
    store = {"driver": driver}
    config = {"agents": {"defaults": {"memorySearch": {"store": store}}}}
    (root / "config.json5").write_text(json.dumps(config), encoding="utf-8")
    (root / "home").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env.update(HOME=str(root / "home"), PYTHONUNBUFFERED="1")
    if pg_url is not None:
        env["MEMLANE_STORE_URL"] = fresh_database(pg_url)
    shared = Shared(root, env, driver)
    for agent in ("alpha", "beta"):
        indexed = shared.run(agent, "index")
        assert indexed.returncode == 0, indexed.stderr
    return shared


@pytest.fixture(scope="module")
def sqlite_shared(tmp_path_factory: pytest.TempPathFactory) -> Shared:
    return _make(tmp_path_factory.mktemp("agents-sqlite"), "sqlite", None)


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def shared(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Shared:
    if request.param == "sqlite":
        fixture: Shared = request.getfixturevalue("sqlite_shared")
        return fixture
    pg_url: str = request.getfixturevalue("pg_url")
    return _make(tmp_path_factory.mktemp("agents-pg"), "postgres", pg_url)


def _hits(payload: dict[str, object]) -> list[dict[str, object]]:
    results = payload["results"]
    assert isinstance(results, list)
    return results


class TestCliAcrossAgents:
    def test_one_ranking_names_each_hits_agent(self, shared: Shared) -> None:
        """Each question finds its answer in the agent that holds it, from alpha's process."""
        migration = _hits(shared.search("alpha", "When does the database migration run?",
                                        "--agents", "alpha,beta"))  # fmt: skip
        deploy = _hits(shared.search("alpha", "When do we deploy the backend?",
                                     "--agents", "alpha,beta"))  # fmt: skip

        assert (migration[0]["agent"], migration[0]["path"]) == ("beta", "MEMORY.md")
        assert (deploy[0]["agent"], deploy[0]["path"]) == ("alpha", "MEMORY.md")
        assert {h["agent"] for h in migration + deploy} == {"alpha", "beta"}
        scores = [float(h["score"]) for h in migration]  # type: ignore[arg-type]
        assert scores == sorted(scores, reverse=True)

    def test_text_output_prefixes_the_agent(self, shared: Shared) -> None:
        done = shared.run("alpha", "search", "cafeteria Wednesdays", "--agents", "alpha,beta")

        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("[beta] ")
        assert "memory/2026-02-01.md" in done.stdout.splitlines()[0]

    def test_an_unknown_agent_is_a_usage_error_not_an_empty_result(self, shared: Shared) -> None:
        done = shared.run("alpha", "search", "deploy", "--agents", "alpha,ghost", "--json")
        bad = shared.run("alpha", "search", "deploy", "--agents", "../etc")

        assert done.returncode == 2
        assert "unknown agent 'ghost'" in done.stderr and "alpha, beta" in done.stderr
        assert done.stdout == ""
        assert bad.returncode == 2 and "invalid agent id" in bad.stderr

    def test_an_unknown_agent_is_refused_before_the_sync_does_any_work(
        self, sqlite_shared: Shared
    ) -> None:
        note = sqlite_shared.root / "alpha" / "memory" / "2026-03-01.md"
        note.parent.mkdir(parents=True, exist_ok=True)
        note.write_text("# 2026-03-01\n\nThe quokka census starts in March.\n")
        try:
            done = sqlite_shared.run("alpha", "search", "quokka", "--agents", "alpha,ghost3")
            events = sqlite_shared.run("alpha", "events", "--json", "--limit", "20")

            assert done.returncode == 2 and "unknown agent 'ghost3'" in done.stderr
            assert "2026-03-01.md" not in events.stdout  # nothing was synced first
        finally:
            note.unlink()

    def test_a_typo_agent_a_status_call_opened_stays_unknown(self, sqlite_shared: Shared) -> None:
        """`--agent ghost2 status` creates nothing for ghost2, and an (empty) file an older
        memlane's status created must not make the typo an agent a search across agents
        accepts and answers nothing from either."""
        (sqlite_shared.root / "ghost2").mkdir(exist_ok=True)  # its --workspace
        opened = sqlite_shared.run("ghost2", "status")
        ghost = sqlite_shared.root / "state" / "agents" / "ghost2"
        created = ghost.exists()
        ghost.mkdir(exist_ok=True)
        SqliteDatabase.open(ghost / "memory.db").close()  # what the older status left
        done = sqlite_shared.run("alpha", "search", "deploy", "--agents", "alpha,ghost2")

        assert opened.returncode == 0, opened.stderr
        assert not created
        assert done.returncode == 2 and "unknown agent 'ghost2'" in done.stderr
        assert "(agents there: alpha, beta)" in done.stderr

    def test_get_reads_another_agents_hit(self, shared: Shared) -> None:
        got = shared.run("alpha", "get", "memory/2026-02-01.md", "--from-agent", "beta", "--json")
        own = shared.run("alpha", "get", "memory/2026-02-01.md", "--json")

        assert got.returncode == 0, got.stderr
        assert "cafeteria closes" in json.loads(got.stdout)["text"]
        assert json.loads(own.stdout)["text"] == ""  # alpha has no such note

    def test_get_of_an_agent_whose_files_are_not_here_says_where_they_are(
        self, shared: Shared
    ) -> None:
        """On another host, or moved away: the recorded workspace is named, nothing is read."""
        workspace = shared.root / "beta"
        aside = shared.root / "beta-aside"
        workspace.rename(aside)
        try:
            moved = shared.run("alpha", "get", "MEMORY.md", "--from-agent", "beta")
        finally:
            aside.rename(workspace)
        unknown = shared.run("alpha", "get", "MEMORY.md", "--from-agent", "ghost")

        assert moved.returncode == 1
        assert f"not found: {workspace} (agent beta's workspace, not a folder" in moved.stderr
        assert moved.stdout == ""
        assert unknown.returncode == 2 and "unknown agent 'ghost'" in unknown.stderr

    def test_other_agents_are_searched_as_indexed_and_one_listed_ranks_like_its_own_search(
        self, shared: Shared
    ) -> None:
        # Alpha's search never indexes beta's workspace: beta's own sync does.
        note = shared.root / "beta" / "memory" / "zanzibar.md"
        note.write_text("The offsite is in Zanzibar.\n", encoding="utf-8")
        try:
            before = _hits(shared.search("alpha", "Zanzibar offsite", "--agents", "alpha,beta"))
            synced = shared.run("beta", "index")
            after = _hits(shared.search("alpha", "Zanzibar offsite", "--agents", "alpha,beta"))
        finally:
            note.unlink()
            # Beta's own search syncs beta first: the note leaves its index again (the restore).
            own = _hits(shared.search("beta", "database migration schedule"))

        assert "memory/zanzibar.md" not in [h["path"] for h in before]
        assert synced.returncode == 0, synced.stderr
        assert (after[0]["agent"], after[0]["path"]) == ("beta", "memory/zanzibar.md")

        # The fusion of one agent's legs is the single-agent rule: same hits, same scores.
        listed = _hits(shared.search("alpha", "database migration schedule", "--agents", "beta"))

        assert [(h["path"], h["startLine"], h["score"]) for h in listed] == [
            (h["path"], h["startLine"], h["score"]) for h in own
        ]
        assert {h["agent"] for h in listed} == {"beta"}
        assert all("agent" not in h for h in own)
        assert "memory/zanzibar.md" not in [h["path"] for h in listed]  # beta is as it was


@pytest.fixture(scope="module")
def keyword_only_work(tmp_path_factory: pytest.TempPathFactory) -> Shared:
    """`main` embeds with the bundled model; `work` is keyword-only by its config (issue 29)."""
    root = tmp_path_factory.mktemp("agents-keyword-only")
    for agent, notes in (("main", ALPHA), ("work", BETA)):
        for relative, text in notes.items():
            (root / agent / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / agent / relative).write_text(text, encoding="utf-8")
    config = {
        "agents": {"list": [
            {"id": "main", "default": True},
            {"id": "work", "memorySearch": {"provider": "none"}},
        ]}
    }  # fmt: skip
    (root / "config.json5").write_text(json.dumps(config), encoding="utf-8")
    (root / "home").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env.update(HOME=str(root / "home"), PYTHONUNBUFFERED="1")
    shared = Shared(root, env, "sqlite")
    for agent in ("main", "work"):
        indexed = shared.run(agent, "index")
        assert indexed.returncode == 0, indexed.stderr
    return shared


class TestKeywordOnlyAgent:
    def test_main_keeps_its_vectors_and_the_warning_says_what_is_the_case(
        self, keyword_only_work: Shared
    ) -> None:
        done = keyword_only_work.run(
            "main", "search", "When do we deploy the backend?", "--agents", "main,work",
            "--json", "--explain",
        )  # fmt: skip

        assert done.returncode == 0, done.stderr
        payload = json.loads(done.stdout)
        assert payload["mode"] == "hybrid"
        top = _hits(payload)[0]
        assert (top["agent"], top["path"]) == ("main", "MEMORY.md")
        assert top["explain"]["vectorScore"] is not None  # type: ignore[index]
        assert "warning: work: keyword-only" in done.stderr
        assert "until the vectors are embedded" not in done.stderr

    def test_the_keyword_only_agent_answers_by_keywords(self, keyword_only_work: Shared) -> None:
        found = keyword_only_work.run(
            "main", "search", "database migration Saturday", "--agents", "main,work", "--json"
        )

        assert found.returncode == 0, found.stderr
        assert "work" in {h["agent"] for h in _hits(json.loads(found.stdout))}


class TestPythonApiAcrossAgents:
    def test_open_search_agents_get_agent_and_unknown_agent(self, sqlite_shared: Shared) -> None:
        root = sqlite_shared.root
        with memlane.open(
            workspace=root / "alpha", agent_id="alpha", state_dir=root / "state",
            config_path=str(root / "config.json5"), env=sqlite_shared.env,
        ) as memory:  # fmt: skip
            found = memory.search("When does the database migration run?", agents="alpha,beta")
            got = memory.get(found.results[0].path, agent=found.results[0].agent)
            with pytest.raises(memlane.UnknownAgent, match="unknown agent 'ghost'"):
                memory.search("deploy", agents=["ghost"])

        assert (found.results[0].agent, found.results[0].path) == ("beta", "MEMORY.md")
        assert "database migration from MySQL" in got.text


@pytest.fixture(scope="module")
def server(sqlite_shared: Shared) -> Iterator[Process]:
    port = _free_port()
    log = sqlite_shared.root / "serve.log"
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [*_command(), *sqlite_shared.args("alpha", "serve", "--host", "127.0.0.1",
                                              "--port", str(port), "--token", TOKEN)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
            env=sqlite_shared.env, cwd=sqlite_shared.root,
        )  # fmt: skip
    process = Process(proc, port, log)
    try:
        _wait_serving(process)
        yield process
    finally:
        proc.kill()
        proc.wait(10)


class TestGrpcAcrossAgents:
    def test_search_request_agents_and_unknown_agent(self, server: Process) -> None:
        with MemlaneClient(f"127.0.0.1:{server.port}", token=TOKEN, timeout=120) as client:
            both = client.search("When does the database migration run?", agents=["alpha", "beta"])
            own = client.search("When does the database migration run?")
            theirs = client.get(both.results[0].path, agent=both.results[0].agent)
            mine = client.get("MEMORY.md")
            with pytest.raises(MemlaneRpcError) as unknown:
                client.search("deploy", agents=["alpha", "ghost"])

        assert (both.results[0].agent, both.results[0].path) == ("beta", "MEMORY.md")
        # Alpha's own memory holds nothing about the migration. The relevance floor is opt-in
        # (session 9): relative fusion ranks alpha's only note, kept, and marked: the
        # question's words match nothing there, so the legs disagree (session 22).
        assert [r.path for r in own.results] == ["MEMORY.md"]
        assert own.no_strong_match is True
        assert "database migration from MySQL" in theirs.text  # beta's MEMORY.md, not alpha's
        assert "database migration from MySQL" not in mine.text
        assert unknown.value.code is grpc.StatusCode.INVALID_ARGUMENT
        assert "unknown agent 'ghost'" in str(unknown.value)


def _payload(result: CallToolResult) -> dict[str, object]:
    text = result.content[0].text  # type: ignore[union-attr]  # always a TextContent here
    payload: dict[str, object] = json.loads(text)
    return payload


class TestMcpAcrossAgents:
    def test_memory_search_agents_then_memory_get_of_the_hit(self, sqlite_shared: Shared) -> None:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "memlane.entrypoints", *sqlite_shared.args("alpha", "mcp")],
            env=sqlite_shared.env,
            cwd=str(sqlite_shared.root),
        )
        seen: dict[str, Any] = {}

        async def main() -> None:
            async with Client(params, read_timeout_seconds=240) as client:
                query = {"query": "cafeteria Wednesdays", "agents": ["alpha", "beta"]}
                found: dict[str, object] = {}
                for _ in range(100):  # until the first sync's warning is gone
                    found = _payload(await client.call_tool("memory_search", query))
                    if "warnings" not in found:
                        break
                    await anyio.sleep(0.2)
                hit = _hits(found)[0]
                seen["hit"] = hit
                got = await client.call_tool(
                    "memory_get", {"path": hit["path"], "agent": hit["agent"]}
                )
                seen["got"] = (got.is_error, _payload(got))
                unknown = await client.call_tool(
                    "memory_search", {"query": "x", "agents": ["ghost"]}
                )
                seen["unknown"] = (unknown.is_error, _payload(unknown))

        anyio.run(main)

        assert seen["hit"]["agent"] == "beta"
        got_error, got = seen["got"]
        assert not got_error and "cafeteria closes" in got["text"]
        assert got["agent"] == "beta"
        unknown_error, unknown = seen["unknown"]
        assert unknown_error and "unknown agent 'ghost'" in unknown["error"]
