"""E2E on PostgreSQL: the real CLI and `memlane serve` with `store.driver: postgres`.

The same flows as test_cli.py and test_grpc_subprocess.py (real processes, bundled model), run
once against a real PostgreSQL + pgvector server from the `pg_url` fixture.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from memlane.entrypoints.grpc.client import MemlaneClient
from tests.e2e.test_grpc_subprocess import (
    NOTES,
    TOKEN,
    Process,
    _command,
    _free_port,
    _wait_serving,
)
from tests.pg_server import fresh_database

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]

CONFIG = {"agents": {"defaults": {"memorySearch": {"store": {"driver": "postgres"}}}}}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, pg_url: str) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("pg-e2e")
    for relative, text in NOTES.items():
        (root / "workspace" / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / "workspace" / relative).write_text(text, encoding="utf-8")
    (root / "home").mkdir()
    (root / "config.json5").write_text(json.dumps(CONFIG), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env.update(HOME=str(root / "home"), PYTHONUNBUFFERED="1")
    env["MEMLANE_STORE_URL"] = fresh_database(pg_url)
    return root, env


def memlane(home: tuple[Path, dict[str, str]], *args: str) -> subprocess.CompletedProcess[str]:
    root, env = home
    return subprocess.run(
        [sys.executable, "-m", "memlane.entrypoints", "--config", str(root / "config.json5"),
         "--state-dir", str(root / "state"), "--workspace", str(root / "workspace"), *args],
        capture_output=True, text=True, env=env, timeout=240, check=False,
    )  # fmt: skip


class TestCliOnPostgres:
    def test_index_search_status_and_events(self, home: tuple[Path, dict[str, str]]) -> None:
        indexed = memlane(home, "index")
        english = memlane(home, "search", "When do we deploy the backend?", "--json")
        chinese = memlane(home, "search", "数据库迁移", "--json")
        status = memlane(home, "status", "--json")
        events = memlane(home, "events", "--json")

        assert indexed.returncode == 0, indexed.stderr
        assert "2 file(s) indexed" in indexed.stdout
        payload = json.loads(english.stdout)
        assert payload["mode"] == "hybrid"
        assert payload["results"][0]["path"] == "MEMORY.md"
        assert json.loads(chinese.stdout)["results"][0]["path"] == "memory/2026-01-05.md"
        report = json.loads(status.stdout)
        assert report["storePath"].startswith("postgresql+psycopg://")
        assert {s["source"]: s["files"] for s in report["bySource"]}["memory"] == 2
        assert {"reindex_required", "index_rebuilt"} <= {
            e["type"] for e in json.loads(events.stdout)
        }

    def test_reading_commands_leave_no_row_for_an_agent_without_an_index(
        self, home: tuple[Path, dict[str, str]]
    ) -> None:
        """As on SQLite (test_daemon_unindexed_agent.py): `status`, `events` and `get` of an
        agent that was never indexed answer empty and write nothing to the shared database."""
        assert memlane(home, "index").returncode == 0  # the schema is there, `main` is indexed
        answers = {
            command: memlane(home, "--agent", "ghost", *command.split())
            for command in ("status --json", "events --json", "get MEMORY.md")
        }
        for command, done in answers.items():
            assert done.returncode == 0, (command, done.stderr)
        shown = json.loads(answers["status --json"].stdout)
        assert (shown["files"], shown["chunks"], shown["lastSync"]) == (0, 0, None)
        assert json.loads(answers["events --json"].stdout) == []

        engine = create_engine(home[1]["MEMLANE_STORE_URL"])
        try:
            with engine.connect() as conn:
                tables = (
                    conn.exec_driver_sql(
                        "SELECT table_name FROM information_schema.columns "
                        "WHERE column_name = 'agent' AND table_schema = current_schema()"
                    )
                    .scalars()
                    .all()
                )
                rows = {
                    table: conn.exec_driver_sql(
                        f'SELECT count(*) FROM "{table}" WHERE agent IN (%s, %s)', ("ghost", "main")
                    ).scalar_one()
                    for table in tables
                }
                ghost = {
                    table: conn.exec_driver_sql(
                        f'SELECT count(*) FROM "{table}" WHERE agent = %s', ("ghost",)
                    ).scalar_one()
                    for table in tables
                }
        finally:
            engine.dispose()
        assert "memlane_agents" in tables and rows["memlane_agents"] == 1  # `main` only
        assert ghost == dict.fromkeys(tables, 0)


@pytest.fixture(scope="module")
def server(home: tuple[Path, dict[str, str]]) -> Iterator[Process]:
    root, env = home
    port = _free_port()
    stderr = root / "serve.log"
    with stderr.open("wb") as err:
        proc = subprocess.Popen(
            [*_command(), "--config", str(root / "config.json5"), "--agent", "served",
             "--workspace", str(root / "workspace"), "--state-dir", str(root / "state"),
             "serve", "--host", "127.0.0.1", "--port", str(port), "--token", TOKEN],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=root,
        )  # fmt: skip
    process = Process(proc, port, stderr)
    try:
        _wait_serving(process)
        yield process
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


class TestServeOnPostgres:
    def test_sync_search_status_events_and_clean_stop(self, server: Process) -> None:
        with MemlaneClient(f"127.0.0.1:{server.port}", token=TOKEN, timeout=120) as client:
            client.sync(reason="explicit")
            again = client.sync()
            response = client.search("When do we deploy the backend?")
            chinese = client.search("数据库迁移")
            status = client.status()
            stream = client.events(tail=5, timeout=30)
            first = next(stream)
            stream.close()

        assert again.files_unchanged == 2
        assert response.results[0].path == "MEMORY.md"
        assert "memory/2026-01-05.md" in [r.path for r in chinese.results]
        assert status.files == 2
        assert status.chunks >= 2
        assert first.position >= 1
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(30) == 0, server.diagnostics()
