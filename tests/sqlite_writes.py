"""Test helpers: SQLite writes held or refused, to show what a store does without them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import sqlean

from memlane.adapters.store.database import SqliteDatabase
from memlane.application.ports.index_store import StoreReadOnly


@contextmanager
def held_write_lock(path: Path) -> Iterator[None]:
    """Another connection holds the file's write lock (another process's write under way)."""
    other = sqlean.connect(str(path), isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        other.execute("ROLLBACK")
        other.close()


def refuse(monkeypatch: pytest.MonkeyPatch, db: SqliteDatabase, method: str) -> None:
    """Make `db.<method>` fail: "write_if_free" as a read-only file does, "write" as a test
    failure, for code that must not wait for the write lock."""

    def refused(work: object) -> None:
        if method == "write":
            raise AssertionError("a note must not wait for the write lock")
        raise StoreReadOnly(f"{db.path}: read-only")

    monkeypatch.setattr(db, method, refused)
