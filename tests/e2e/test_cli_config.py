"""End to end: the configuration a CLI run resolved is visible in `status --json`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memlane.entrypoints.config.keys import MEMORY_KEYS, MEMORY_SEARCH_KEYS

pytestmark = pytest.mark.e2e


def test_status_json_shows_the_effective_settings(tmp_path: Path) -> None:
    """Every key with a settings field is listed; env and file values are the resolved ones."""
    (tmp_path / "ws").mkdir()
    config = tmp_path / "config.json5"
    config.write_text(
        "{agents: {defaults: {memorySearch: {query: {maxResults: 3.9}}}}}", encoding="utf-8"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMLANE_", "OPENAI_"))}
    env |= {"HOME": str(tmp_path), "MEMLANE_PROVIDER": "none"}

    done = subprocess.run(
        [sys.executable, "-m", "memlane.entrypoints", "--config", str(config),
         "--state-dir", str(tmp_path / "state"), "--workspace", str(tmp_path / "ws"),
         "status", "--json"],
        capture_output=True, text=True, env=env, timeout=240, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    settings = json.loads(done.stdout)["settings"]
    assert settings["query.maxResults"] == 3
    assert settings["provider"] == "none"
    listed = {k.path for k in MEMORY_SEARCH_KEYS if k.field} | {
        f"memory.{k.path}" for k in MEMORY_KEYS if k.field
    }
    assert set(settings) == listed


def _status(tmp_path: Path, config_text: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "ws").mkdir(exist_ok=True)
    config = tmp_path / "config.json5"
    config.write_text(config_text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMLANE_", "OPENAI_"))}
    env |= {"HOME": str(tmp_path), "MEMLANE_PROVIDER": "none"}
    return subprocess.run(
        [sys.executable, "-m", "memlane.entrypoints", "--config", str(config),
         "--state-dir", str(tmp_path / "state"), "--workspace", str(tmp_path / "ws"),
         "status", "--json"],
        capture_output=True, text=True, env=env, timeout=240, check=False,
    )  # fmt: skip


def test_a_typo_outside_the_memory_blocks_is_named_with_the_key_meant(tmp_path: Path) -> None:
    """#30.4: `agent:` and `memorySerach` would silently drop their settings."""
    done = _status(
        tmp_path, "{agent: {defaults: {}}, agents: {defaults: {memorySerach: {provider: 'x'}}}}"
    )

    assert done.returncode == 0, done.stderr
    assert "warning: agent is ignored: memlane reads no such key here: did you mean 'agents'?" in (
        done.stderr
    )
    assert "did you mean 'agents.defaults.memorySearch'?" in done.stderr
    listed = [k["key"] for k in json.loads(done.stdout)["ignoredKeys"]]
    assert listed == ["agent", "agents.defaults.memorySerach"]


def test_a_config_error_is_an_error_line_not_a_usage_text(tmp_path: Path) -> None:
    done = _status(tmp_path, "{agents: {defaults: {memorySearch: {provder: 'none'}}}}")

    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "error: agents.defaults.memorySearch.provder: unknown key (did you mean 'provider'?)"
    ]
