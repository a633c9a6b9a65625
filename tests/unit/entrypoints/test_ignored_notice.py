"""Ignored config keys are shown once per config change (entrypoints/ignored_notice.py)."""

from __future__ import annotations

import json
from pathlib import Path

from memlane.entrypoints.api import resolve_config
from memlane.entrypoints.config.runtime import RuntimeConfig
from memlane.entrypoints.ignored_notice import SHOWN_FILE, to_show


def _runtime(tmp_path: Path, agent: str = "main", **block: object) -> RuntimeConfig:
    config = tmp_path / "config.json5"
    memory = {"local": {"contextSize": 2048}, **block}
    config.write_text(json.dumps({"agents": {"defaults": {"memorySearch": memory}}}))
    return resolve_config(
        workspace=tmp_path, agent_id=agent, state_dir=tmp_path / "state",
        config_path=str(config), env={},
    )  # fmt: skip


def test_shown_once_then_again_after_a_change(tmp_path: Path) -> None:
    assert to_show(_runtime(tmp_path)) is True
    assert to_show(_runtime(tmp_path)) is False
    assert to_show(_runtime(tmp_path), always=True) is True
    changed = _runtime(tmp_path, store={"fts": {"tokenizer": "trigram"}})
    assert to_show(changed) is True
    assert to_show(changed) is False


def test_each_agent_has_its_own_record(tmp_path: Path) -> None:
    assert to_show(_runtime(tmp_path, "main")) is True
    assert to_show(_runtime(tmp_path, "work")) is True
    assert to_show(_runtime(tmp_path, "main")) is False


def test_nothing_ignored_shows_nothing_and_writes_nothing(tmp_path: Path) -> None:
    config = tmp_path / "config.json5"
    config.write_text("{}")
    runtime = resolve_config(
        workspace=tmp_path, state_dir=tmp_path / "state", config_path=str(config), env={}
    )

    assert to_show(runtime) is False
    assert not (tmp_path / "state" / SHOWN_FILE).exists()


def test_an_unreadable_record_means_shown_again(tmp_path: Path) -> None:
    runtime = _runtime(tmp_path)
    to_show(runtime)
    (tmp_path / "state" / SHOWN_FILE).write_text("not json")

    assert to_show(runtime) is True


def test_a_state_dir_that_cannot_be_written_shows_them_every_time(tmp_path: Path) -> None:
    runtime = _runtime(tmp_path)
    (tmp_path / "state").write_text("a file where the folder should be")

    assert to_show(runtime) is True
    assert to_show(runtime) is True
