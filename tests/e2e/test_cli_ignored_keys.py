"""The real CLI names each ignored config key once per config change, not on every command.

Issue 29: repeating `... is ignored` on every search trains people to skip warnings. The
warnings come once for a config (per agent and state directory) and again when the config
changes; `status --verbose` and `status --json` always show them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

CONTEXT_SIZE = "agents.defaults.memorySearch.local.contextSize is ignored"
TOKENIZER = "agents.defaults.memorySearch.store.fts.tokenizer is ignored"


def _write_config(root: Path, **extra: object) -> None:
    block: dict[str, object] = {"provider": "none", "local": {"contextSize": 2048}, **extra}
    config = {"agents": {"defaults": {"memorySearch": block}}}
    (root / "config.json5").write_text(json.dumps(config), encoding="utf-8")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "MEMORY.md").write_text("# Memory\n\nThe office cat is Miso.\n")
    (tmp_path / "home").mkdir()
    _write_config(tmp_path)
    return tmp_path


def memlane(root: Path, *args: str, agent: str = "main") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMLANE_", "OPENCLAW_"))}
    env["HOME"] = str(root / "home")
    return subprocess.run(
        [sys.executable, "-m", "memlane.entrypoints", "--config", str(root / "config.json5"),
         "--state-dir", str(root / "state"), "--workspace", str(root / "ws"),
         "--agent", agent, *args],
        capture_output=True, text=True, env=env, timeout=240, check=False,
    )  # fmt: skip


def test_the_second_search_prints_no_ignored_key_warning(root: Path) -> None:
    first = memlane(root, "search", "cat")
    second = memlane(root, "search", "cat")

    assert first.returncode == 0 and second.returncode == 0, second.stderr
    assert f"warning: {CONTEXT_SIZE}" in first.stderr
    assert "is ignored" not in second.stderr
    assert "Miso" in second.stdout  # the search itself is unchanged


def test_a_config_change_prints_them_again(root: Path) -> None:
    memlane(root, "search", "cat")
    _write_config(root, store={"fts": {"tokenizer": "trigram"}})

    changed = memlane(root, "search", "cat")
    again = memlane(root, "search", "cat")

    assert CONTEXT_SIZE in changed.stderr and TOKENIZER in changed.stderr
    assert "is ignored" not in again.stderr


def test_status_verbose_and_json_always_show_them(root: Path) -> None:
    memlane(root, "search", "cat")

    verbose = memlane(root, "status", "--verbose")
    as_json = memlane(root, "status", "--json")

    assert verbose.returncode == 0, verbose.stderr
    assert CONTEXT_SIZE in verbose.stderr
    assert "Ignored: agents.defaults.memorySearch.local.contextSize" in verbose.stdout
    assert "is ignored" not in as_json.stderr
    keys = [i["key"] for i in json.loads(as_json.stdout)["ignoredKeys"]]
    assert keys == ["agents.defaults.memorySearch.local.contextSize"]


def test_each_agent_is_told_once(root: Path) -> None:
    """Another agent of the same state directory runs its own process: it is told too."""
    memlane(root, "search", "cat")

    other = memlane(root, "search", "cat", agent="work")

    assert CONTEXT_SIZE in other.stderr
