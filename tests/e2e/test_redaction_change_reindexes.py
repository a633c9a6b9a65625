"""E2E: changing what is masked reaches text already indexed.

A pattern added to `redaction.extraPatterns`, or `redaction.notes` turned on, used to apply to
files indexed from then on only: a secret already in the index stayed in every search hit until
its file changed. The index meta now records what its text was masked with, and the next sync
rebuilds the index when that differs (reason `redaction_changed`). Real CLI processes, real
SQLite, keyword-only.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e._loud_support import cli_env, make_home
from tests.e2e._loud_support import memlane as run_cli

pytestmark = pytest.mark.e2e

TICKET = "ticket-4711"


def _setup(tmp_path: Path) -> Path:
    home = make_home(tmp_path, {"MEMORY.md": f"# Support\n\nThe escalation is {TICKET}.\n"})
    sessions = home / "state" / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    said = {"role": "user", "content": f"please look at {TICKET} for the escalation"}
    (sessions / "chat.jsonl").write_text(json.dumps({"type": "message", "message": said}) + "\n")
    return home


def _env(home: Path, redaction: dict[str, object]) -> dict[str, str]:
    config = home / "config.json"
    search = {"sources": ["memory", "sessions"], "redaction": redaction}
    config.write_text(json.dumps({"agents": {"defaults": {"memorySearch": search}}}))
    return cli_env(home, MEMLANE_CONFIG=str(config), MEMLANE_NO_DAEMON="1")


def _snippets(home: Path, env: dict[str, str]) -> dict[str, str]:
    found = run_cli(home, "search", "escalation", "--json", env=env)
    assert found.returncode == 0, found.stderr
    return {hit["source"]: hit["snippet"] for hit in json.loads(found.stdout)["results"]}


def _reasons(home: Path, env: dict[str, str]) -> list[str]:
    done = run_cli(home, "events", "--json", env=env)
    assert done.returncode == 0, done.stderr
    return [e["reason"] for e in json.loads(done.stdout) if e["type"] == "reindex_required"]


def test_each_change_of_masking_reaches_what_is_already_indexed(tmp_path: Path) -> None:
    home = _setup(tmp_path)
    env = _env(home, {})
    assert run_cli(home, "index", env=env).returncode == 0
    before = _snippets(home, env)
    assert TICKET in before["sessions"] and TICKET in before["memory"]

    env = _env(home, {"extraPatterns": ["ticket-[0-9]+"]})  # a pattern added
    indexed = run_cli(home, "index", env=env)

    assert indexed.returncode == 0, indexed.stderr
    assert indexed.stdout.startswith("full reindex"), indexed.stdout
    after = _snippets(home, env)
    assert TICKET not in after["sessions"] and "***" in after["sessions"]
    assert TICKET in after["memory"]  # notes are masked only with redaction.notes

    env = _env(home, {"extraPatterns": ["ticket-[0-9]+"], "notes": True})  # notes too
    assert run_cli(home, "index", env=env).returncode == 0
    assert TICKET not in _snippets(home, env)["memory"]

    env = _env(home, {"enabled": False, "extraPatterns": ["ticket-[0-9]+"]})  # masking off
    assert run_cli(home, "index", env=env).returncode == 0
    assert TICKET in _snippets(home, env)["sessions"]  # shown as written
    assert _reasons(home, env)[-3:] == ["redaction_changed"] * 3
