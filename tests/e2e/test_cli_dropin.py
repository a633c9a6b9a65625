"""End to end (in process): the CLI habits of the reference's users (issue 15, items 1, 10)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from memlane.entrypoints.api import close_all
from memlane.entrypoints.cli import cli

pytestmark = pytest.mark.e2e


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    for name in ("MEMLANE_CONFIG", "MEMLANE_STATE_DIR", "MEMLANE_AGENT", "OPENCLAW_STATE_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("MEMLANE_PROVIDER", "none")
    for agent in ("a", "b"):
        (tmp_path / agent / "memory").mkdir(parents=True)
        (tmp_path / agent / "MEMORY.md").write_text(f"# {agent}\n\nkiwi note of agent {agent}\n")
    config = tmp_path / "config.json5"
    config.write_text(
        json.dumps({
            "agents": {"list": [
                {"id": "a", "workspace": str(tmp_path / "a")},
                {"id": "b", "workspace": str(tmp_path / "b")},
                {"id": "off", "workspace": str(tmp_path / "a"),
                 "memorySearch": {"enabled": False}},
            ]},
        }),
        encoding="utf-8",
    )  # fmt: skip
    yield tmp_path
    close_all()


def run(home: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(
        cli, ["--config", str(home / "config.json5"), "--state-dir", str(home / "s"), *args]
    )
    return result.exit_code, result.stdout, result.stderr


def test_global_options_after_the_subcommand(home: Path) -> None:
    code, out, err = run(home, "search", "kiwi", "--agent", "b", "--json")

    assert code == 0, err
    assert [r["path"] for r in json.loads(out)["results"]] == ["MEMORY.md"]
    assert "agent b" in json.loads(out)["results"][0]["snippet"]


def test_json_keys_have_one_casing(home: Path) -> None:
    _, status, _ = run(home, "status", "--json", "--agent", "a")
    _, got, _ = run(home, "get", "MEMORY.md", "--json", "--agent", "a")

    def keys(value: object) -> set[str]:
        if isinstance(value, dict):
            return set(value) | {k for v in value.values() for k in keys(v)}
        if isinstance(value, list):
            return {k for v in value for k in keys(v)}
        return set()

    payload = json.loads(status)
    found = (keys(payload) - set(payload["settings"])) | keys(json.loads(got))
    assert "bySource" in found and "fromLine" in found
    assert not [k for k in found if "_" in k]


def test_status_verbose_shows_the_config_and_every_setting(home: Path) -> None:
    code, out, _ = run(home, "status", "--verbose", "--agent", "a")

    assert code == 0
    assert f"Config: {home / 'config.json5'}" in out
    assert "  query.maxResults = 6" in out


def test_a_disabled_agent_says_so_and_indexes_nothing(home: Path) -> None:
    status_code, status_out, _ = run(home, "status", "--json", "--agent", "off")
    index_code, _, index_err = run(home, "index", "--agent", "off")
    search_code, search_out, _ = run(home, "search", "kiwi", "--json", "--agent", "off")

    assert status_code == index_code == search_code == 0
    payload = json.loads(status_out)
    assert (payload["enabled"], payload["status"]) == (False, "disabled")
    assert "memorySearch.enabled: false" in payload["reason"]
    assert "disabled" in index_err
    assert json.loads(search_out)["disabled"] is True
    assert not (home / "s" / "agents" / "off").exists()
