"""Temporary databases left by killed rebuilds are removed; live ones and others' never."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.adapters.store.temp_files import remove_abandoned_temps, temp_path_for

pytestmark = pytest.mark.integration

UUID = "0" * 32


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _touch(path: Path, *suffixes: str) -> Path:
    for suffix in ("", *suffixes):
        Path(f"{path}{suffix}").write_bytes(b"x")
    return path


def _host(db: Path) -> str:
    """This host's tag, as `temp_path_for` writes it."""
    return temp_path_for(db).name.split(".tmp-")[1].split("-")[0]


class TestRemoveAbandonedTemps:
    def test_a_dead_builders_files_go_with_their_side_files(self, tmp_path: Path) -> None:
        db = tmp_path / "memory.db"
        dead = _touch(tmp_path / f"memory.db.tmp-{_host(db)}-{_dead_pid()}-{UUID}", "-wal", "-shm")

        assert remove_abandoned_temps(db) == [dead]

        assert sorted(tmp_path.iterdir()) == []

    def test_a_live_builders_files_stay(self, tmp_path: Path) -> None:
        db = tmp_path / "memory.db"
        live = _touch(temp_path_for(db), "-wal")  # this process: alive

        assert remove_abandoned_temps(db) == []

        assert live.exists() and Path(f"{live}-wal").exists()

    def test_other_hosts_older_names_and_other_databases_stay(self, tmp_path: Path) -> None:
        db = tmp_path / "memory.db"
        dead = _dead_pid()
        other_host = "ffffffff" if _host(db) != "ffffffff" else "eeeeeeee"
        kept = [
            _touch(tmp_path / f"memory.db.tmp-{other_host}-{dead}-{UUID}"),
            _touch(tmp_path / f"memory.db.tmp-{UUID}"),  # named before the pid was recorded
            _touch(tmp_path / f"other.db.tmp-{_host(db)}-{dead}-{UUID}"),
            _touch(tmp_path / "memory.db.tmp-notes.txt"),
        ]

        assert remove_abandoned_temps(db) == []

        assert all(path.exists() for path in kept)

    def test_a_missing_folder_is_no_error(self, tmp_path: Path) -> None:
        assert remove_abandoned_temps(tmp_path / "missing" / "memory.db") == []

    def test_opening_the_index_sweeps_and_keeps_the_index(self, tmp_path: Path) -> None:
        db = tmp_path / "memory.db"
        SqliteIndexStore.open(db).close()
        dead = _touch(tmp_path / f"memory.db.tmp-{_host(db)}-{_dead_pid()}-{UUID}")

        store = SqliteIndexStore.open(db)

        assert not dead.exists()
        assert db.exists() and store.files() == []
        store.close()


def test_temp_names_carry_this_process() -> None:
    name = temp_path_for(Path("/x/memory.db")).name

    assert name.startswith("memory.db.tmp-") and f"-{os.getpid()}-" in name
