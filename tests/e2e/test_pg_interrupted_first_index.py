"""On PostgreSQL too, a first index killed half-way is resumed for the workspace it started on.

The SQLite variant is test_interrupted_first_index.py. The shared store keeps each host's
workspace in a record written with the finished index meta, so a resume without `--workspace`
from another folder found no workspace, bound the index to that folder and dropped the rows
already written. The first index's start record names the workspace: it is used.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from tests.pg_server import fresh_database

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]

NOTES = 1200  # keyword-only: seconds of indexing, time enough to kill it half-way
CONFIG = {
    "agents": {
        "defaults": {
            "memorySearch": {
                "provider": "none",
                "sources": ["memory"],
                "store": {"driver": "postgres"},
            }
        }
    }
}


class Home:
    """A workspace `ws` of many notes, an empty folder `elsewhere`, a config and a database."""

    def __init__(self, root: Path, url: str) -> None:
        self.root = root
        self.url = url
        (root / "ws" / "memory").mkdir(parents=True)
        (root / "ws" / "MEMORY.md").write_text("# Preferences\n\ntabs over spaces\n")
        for n in range(NOTES):
            (root / "ws" / "memory" / f"n{n:05}.md").write_text(f"# Note {n}\n\nword{n} text\n")
        (root / "elsewhere").mkdir()
        (root / "other" / "memory").mkdir(parents=True)
        (root / "other" / "MEMORY.md").write_text("# Other\n")
        (root / "memlane.json").write_text(json.dumps(CONFIG), encoding="utf-8")
        self.env = {
            k: v for k, v in os.environ.items() if not k.startswith(("MEMLANE_", "OPENAI_"))
        }
        self.env.update(HOME=str(root), MEMLANE_STORE_URL=url)

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "memlane.entrypoints", "--state-dir",
                str(self.root / "state"), "--config", str(self.root / "memlane.json"), *args]  # fmt: skip

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`memlane ARGS` in `elsewhere`, no --workspace unless `args` name one."""
        return subprocess.run(
            self.command(*args), capture_output=True, text=True, env=self.env,
            cwd=self.root / "elsewhere", timeout=300, check=False,
        )  # fmt: skip

    def files(self) -> int:
        """The rows of agent main's files table (0 before the schema exists)."""
        engine = create_engine(self.url)
        try:
            with engine.connect() as conn:
                if conn.exec_driver_sql("SELECT to_regclass('memlane_files')").scalar() is None:
                    return 0
                return int(
                    conn.exec_driver_sql(
                        "SELECT count(*) FROM memlane_files WHERE agent = 'main'"
                    ).scalar_one()
                )
        finally:
            engine.dispose()

    def killed_half_way(self) -> int:
        """Start `index` in the workspace and SIGKILL it once some files are written."""
        proc = subprocess.Popen(
            self.command("index"), cwd=self.root / "ws", env=self.env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 180
        rows = 0
        while time.monotonic() < deadline and proc.poll() is None:
            rows = self.files()
            if rows >= 100:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the index finished before it could be interrupted"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        return rows


@pytest.fixture
def home(tmp_path: Path, pg_url: str) -> Home:
    return Home(tmp_path, fresh_database(pg_url))


def test_a_resume_from_another_folder_keeps_the_started_workspace(home: Home) -> None:
    written = home.killed_half_way()
    assert 0 < written < NOTES + 1

    seen = home.run("status", "--json")  # no --workspace, another folder
    resumed = home.run("index")
    after = home.run("status", "--json")

    assert seen.returncode == 0, seen.stderr
    assert json.loads(seen.stdout)["workspace"] == str(home.root / "ws")
    assert resumed.returncode == 0, resumed.stderr
    assert "bound to the current directory" not in resumed.stderr
    assert json.loads(after.stdout)["files"] == NOTES + 1  # the notes and MEMORY.md
    assert home.files() == NOTES + 1


def test_another_workspace_is_refused_as_for_a_finished_index(home: Home) -> None:
    home.killed_half_way()
    written = home.files()

    refused = home.run("--workspace", str(home.root / "other"), "index")

    assert refused.returncode == 1, refused.stdout
    assert str(home.root / "ws") in refused.stderr
    assert home.files() == written  # nothing dropped
