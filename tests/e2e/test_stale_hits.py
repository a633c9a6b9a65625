"""With `sync.onSearch: false`, `memlane search` says which hits' files changed since indexed."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e._loud_support import cli_env, make_home, memlane


def test_a_note_edited_after_indexing_is_named_in_text_and_json(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    config = home / "config.json5"
    config.write_text(json.dumps({"agents": {"defaults": {"memorySearch": {"sync": {"onSearch": False}}}}}))  # fmt: skip
    env = cli_env(home, MEMLANE_CONFIG=str(config), MEMLANE_NO_DAEMON="1")
    assert memlane(home, "index", env=env).returncode == 0
    note = home / "ws" / "MEMORY.md"
    note.write_text("\n\n\n" + note.read_text(encoding="utf-8"), encoding="utf-8")

    searched = memlane(home, "search", "--json", "tabs", env=env)
    text = memlane(home, "search", "tabs", env=env)

    assert searched.returncode == 0, searched.stderr
    payload = json.loads(searched.stdout)
    assert payload["results"][0]["path"] == "MEMORY.md"  # the old hit, as indexed
    (warning,) = payload["warnings"]
    assert warning.startswith("MEMORY.md changed since it was indexed")
    assert f"warning: {warning}" in text.stderr.splitlines()
    untouched = memlane(home, "search", "--json", "pgbouncer", env=env)
    assert "warnings" not in json.loads(untouched.stdout)  # memory/2026-11-17.md is as indexed
