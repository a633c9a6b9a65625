"""Adapter: an empty index standing in for one that does not exist yet.

A command that only reads (`status`, `get`, `events`) of an agent that has no index file
answers from it, as it would from a new, empty index, and leaves nothing behind: neither the
agent's file nor its folder is created, so an agent named by mistake does not become one. The
stand-in lives in a private temporary folder, removed when it closes.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from memlane.adapters.store.database import SqliteDatabase


class StandInDatabase(SqliteDatabase):
    """An empty, migrated index in a temporary folder, reported as the file at `stands_for`."""

    @classmethod
    def create(cls, stands_for: Path, *, load_vector: bool = True) -> StandInDatabase:
        folder = Path(tempfile.mkdtemp(prefix="memlane-stand-in-"))
        db = cls(folder / stands_for.name, load_vector=load_vector)
        db.label = stands_for
        try:
            db.initialise()
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        return db

    def close(self) -> None:
        super().close()
        shutil.rmtree(self.path.parent, ignore_errors=True)
