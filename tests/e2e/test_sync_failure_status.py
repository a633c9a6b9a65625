"""A sync that failed in a `memlane watch` is said by `status` run afterwards in another process
(when, which trigger, why), until a sync goes through.

The failure is real: a trigger in the index refuses to store one note, so the watcher's handler
cannot commit it, while the rest of the database (the event log too) stays writable.
"""

from __future__ import annotations

import contextlib
import json
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e._daemon_support import until
from tests.e2e._loud_support import cli_env, make_home, memlane

pytestmark = pytest.mark.e2e

_POISON = (
    "CREATE TRIGGER poison BEFORE INSERT ON files WHEN NEW.path = 'memory/poison.md' "
    "BEGIN SELECT RAISE(ABORT, 'poisoned row'); END"
)


def _sql(db: Path, statement: str) -> list[tuple[object, ...]]:
    with contextlib.closing(sqlite3.connect(db, timeout=30)) as conn, conn:
        return conn.execute(statement).fetchall()


def test_status_in_another_process_says_why_the_watchers_sync_failed(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    db = home / "state" / "agents" / "main" / "memory.db"
    config = home / "config.json5"
    config.write_text("{agents: {defaults: {memorySearch: {sync: {watchDebounceMs: 200}}}}}")
    assert memlane(home, "--config", str(config), "index").returncode == 0
    _sql(db, _POISON)
    watch = [sys.executable, "-m", "memlane.entrypoints", "--config", str(config)]
    watch += ["--state-dir", str(home / "state"), "--workspace", str(home / "ws"), "watch"]

    with subprocess.Popen(watch, env=cli_env(home), stderr=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stderr is not None
            while "watching" not in proc.stderr.readline():
                assert proc.poll() is None
            (home / "ws" / "memory" / "poison.md").write_text("# Poison\n\nNot stored.\n")
            failed = "SELECT count(*) FROM events WHERE type = 'sync_failed'"
            assert until(lambda: _sql(db, failed) != [(0,)], timeout=60.0)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)

    said = memlane(home, "--config", str(config), "status")
    as_json = memlane(home, "--config", str(config), "status", "--json")

    assert said.returncode == 0, said.stderr
    assert "Last sync failed: " in said.stdout and " (watch)" in said.stdout
    assert "  memory/poison.md: " in said.stdout and "poisoned row" in said.stdout
    failure = json.loads(as_json.stdout)["lastSyncFailure"]
    assert failure["trigger"] == "watch" and "poisoned row" in failure["reasons"][0]

    _sql(db, "DROP TRIGGER poison")
    assert memlane(home, "--config", str(config), "index").returncode == 0
    after = memlane(home, "--config", str(config), "status", "--json")
    assert json.loads(after.stdout)["lastSyncFailure"] is None
