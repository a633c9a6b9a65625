"""The SQLite store tells a rebuild under way in another live process by its temporary database
(`<db>.tmp-<host>-<pid>-<uuid>`), and not its own, a dead process's or another host's."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from memlane.adapters.store.database import SqliteDatabase
from memlane.adapters.store.processes import host_tag
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore

pytestmark = pytest.mark.integration


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteIndexStore]:
    opened = SqliteIndexStore(SqliteDatabase.open(tmp_path / "memory.db"))
    yield opened
    opened.close()


def _temp(db: Path, pid: int, host: str | None = None) -> Path:
    path = db.with_name(f"{db.name}.tmp-{host or host_tag()}-{pid}-{uuid.uuid4().hex}")
    path.write_bytes(b"")
    return path


def test_a_live_other_process_rebuilding_is_seen(store: SqliteIndexStore, tmp_path: Path) -> None:
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]) as builder:
        try:
            assert not store.rebuild_elsewhere()
            temp = _temp(tmp_path / "memory.db", builder.pid)
            assert store.rebuild_elsewhere()
            temp.unlink()  # swapped in
            assert not store.rebuild_elsewhere()
        finally:
            builder.kill()


def test_its_own_a_dead_ones_and_another_hosts_are_not(
    store: SqliteIndexStore, tmp_path: Path
) -> None:
    db = tmp_path / "memory.db"
    _temp(db, os.getpid())  # this process's own rebuild
    _temp(db, 2**22 + 12345)  # no such process
    _temp(db, os.getppid(), host="0badc0de")  # alive here, but named by another host

    assert not store.rebuild_elsewhere()
