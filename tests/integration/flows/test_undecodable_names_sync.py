"""A file, folder or transcript whose name is not valid UTF-8 is one issue, never a failed sync
(real files, the real SQLite store, the real sources)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from memlane.application.memory import MemoryManager
from memlane.entrypoints.api import open_manager

pytestmark = pytest.mark.integration

ISSUES = {
    "memory/caf\\xe9.md": "file name is not valid UTF-8",
    "memory/dir\\xff": "folder name is not valid UTF-8",
    "sessions/s\\xe9.jsonl": "file name is not valid UTF-8",
}


def _raw(folder: Path, name: bytes) -> bytes:
    return os.path.join(os.fsencode(folder), name)


def _write(path: bytes, content: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(content)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    memory = tmp_path / "ws" / "memory"
    memory.mkdir(parents=True)
    (tmp_path / "ws" / "MEMORY.md").write_text("# a\nwalrus note\n")
    _write(_raw(memory, b"caf\xe9.md"), b"# x\nwalrus\n")
    os.mkdir(_raw(memory, b"dir\xff"))
    _write(os.path.join(_raw(memory, b"dir\xff"), b"in.md"), b"# y\nwalrus\n")
    sessions = tmp_path / "state" / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    _write(_raw(sessions, b"s\xe9.jsonl"), b'{"type":"message"}\n')
    return tmp_path


def _open(home: Path) -> MemoryManager:
    return open_manager(
        workspace=home / "ws",
        state_dir=home / "state",
        config={"provider": "none", "query": {"minScore": 0}},
        env={"HOME": str(home)},
    )


def test_sync_search_and_rebuild_go_on_and_list_each_name_once(home: Path) -> None:
    with _open(home) as manager:
        first = manager.sync()
        found = [r.path for r in manager.search("walrus").results]
        rebuilt = manager.sync(force=True)
        issues = {i.path: i.reason for i in manager.status().issues}

    assert first.files_indexed == 1 and rebuilt.full_reindex
    assert found == ["MEMORY.md"]
    assert issues == ISSUES


def test_the_issues_are_kept_with_the_index_for_the_next_process(home: Path) -> None:
    with _open(home) as manager:
        manager.sync(force=True)
    database = sqlite3.connect(home / "state" / "agents" / "main" / "memory.db")
    with database:
        stored = dict(database.execute("SELECT path, reason FROM issues").fetchall())
    database.close()

    with _open(home) as manager:  # a new manager reads what the last sync recorded
        issues = {i.path: i.reason for i in manager.status().issues}

    assert stored == ISSUES
    assert issues == ISSUES
