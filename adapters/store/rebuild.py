"""Adapter: a safe full reindex, built in a temporary database and swapped in atomically.

How the swap works, and why not by renaming files: the rebuilt file is copied over the live one
with SQLite's online backup API, in ONE write transaction on the live database. Every connection
(this process's pool, a second process's reader) then simply sees a new committed state, and a
crash or error mid-copy rolls back to the old index. Renaming `<db>`, `-wal` and `-shm` (the
reference's way) is unsafe as soon as another process holds the file open: when its stale
connection closes it checkpoints and deletes `<db>-wal` *by name*, which is then the new
database's WAL.

Carried over at commit, under the live database's in-process write lock: the event log, the
AUTOINCREMENT high-water mark of `events` (positions are never reused), handler tracking, and
embedding cache entries added to the live index meanwhile. The cache itself is copied into the
temporary database when the rebuild starts, so re-embedding unchanged text costs nothing.

A process killed mid-rebuild leaves its temporary files behind; `temp_files` names them so
that the next open of the index removes them (and never those of a rebuild still running).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from memlane.adapters.rebuild_writes import RebuildWrites
from memlane.adapters.store.database import SqliteDatabase
from memlane.adapters.store.temp_files import remove_files
from memlane.application.ports.index_store import IndexWriter, StoreError

# Free space a rebuild needs beside the index, as a multiple of the index file's size: the
# temporary copy, then the swap writing that copy through the live file's write-ahead log
# (measured: an 18.5 MB index took an 18.5 MB temporary file and an 18.7 MB log at its peak).
# Without the check, a full disk failed the rebuild only once it had been written (7 s for that
# index), and every later search retried it.
REBUILD_ROOM: Final = 2.0


def _attached(raw: Any, other: Path, sql: Sequence[str]) -> None:
    """Run `sql` in one IMMEDIATE transaction with `other` attached as `live`."""
    raw.execute("ATTACH DATABASE ? AS live", (str(other),))
    try:
        raw.execute("BEGIN IMMEDIATE")
        try:
            for statement in sql:
                raw.execute(statement)
        except BaseException:
            raw.execute("ROLLBACK")
            raise
        raw.execute("COMMIT")
    finally:
        raw.execute("DETACH DATABASE live")


_COPY_CACHE = (
    "INSERT OR IGNORE INTO main.embedding_cache "
    "SELECT provider, model, provider_key, hash, embedding, dims, last_used "
    "FROM live.embedding_cache"
)
_CARRY_OVER = (
    "DELETE FROM main.events",
    "INSERT INTO main.events(position, type, version, data, occurred_at) "
    "SELECT position, type, version, data, occurred_at FROM live.events",
    "DELETE FROM main.sqlite_sequence WHERE name = 'events'",
    "INSERT INTO main.sqlite_sequence(name, seq) "
    "SELECT name, seq FROM live.sqlite_sequence WHERE name = 'events'",
    "DELETE FROM main.tracking",
    "INSERT INTO main.tracking(handler, position) SELECT handler, position FROM live.tracking",
    # The last sync that finished, until this one records itself: a rebuild killed after its
    # swap (during its vectors) left `status` saying the index was never synced.
    "INSERT OR IGNORE INTO main.meta(key, value) "
    "SELECT key, value FROM live.meta WHERE key = 'last_sync'",
    _COPY_CACHE,
)


class SqliteIndexRebuild(RebuildWrites):
    """A full reindex being written to a temporary database beside the live one.

    It writes through any IndexWriter over the temporary database (the store passes a
    SqliteIndexStore), so this module needs no store class and the store can import it. Its
    embedding cache starts as a copy of the live one and replaces it at commit.
    """

    def __init__(
        self,
        live: SqliteDatabase,
        temp: SqliteDatabase,
        writer: IndexWriter,
        on_swap: Callable[[], None],
    ) -> None:
        """Prefer `start`, which creates the temporary database and copies the cache."""
        super().__init__(
            writer, closed_message=f"{temp.path}: this rebuild was already committed or aborted"
        )
        self._live = live
        self._temp_db = temp
        self._on_swap = on_swap

    @classmethod
    def start(
        cls,
        live: SqliteDatabase,
        temp_path: Path,
        *,
        open_writer: Callable[[SqliteDatabase], IndexWriter],
        on_swap: Callable[[], None],
    ) -> SqliteIndexRebuild:
        """Create `temp_path`, copy the live embedding cache into it, and return the rebuild.

        `open_writer` serves the temporary database; `on_swap` runs after the swap, under the
        live write lock (the live store forgets its in-process caches there).
        """
        _check_room(live.path)
        temp_db: SqliteDatabase | None = None
        try:
            temp_db = SqliteDatabase.open(temp_path, load_vector=live.load_vector)
            with temp_db.raw() as raw:
                _attached(raw, live.path, [_COPY_CACHE])
        except BaseException:
            if temp_db is not None:
                temp_db.close()
            remove_files(temp_path)
            raise
        return cls(live, temp_db, open_writer(temp_db), on_swap)

    @property
    def path(self) -> Path:
        """Where the rebuild is being written."""
        return self._temp_db.path

    def commit(self) -> None:
        """Replace the live index with the rebuilt one, atomically; the old one stays on error."""
        self._check_open()
        live_db = self._live
        temp_db = self._temp_db
        try:
            with live_db.write_lock():
                with temp_db.raw() as raw:
                    _attached(raw, live_db.path, _CARRY_OVER)
                    raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                    with live_db.raw() as target:
                        raw.backup(target)
                live_db.reset()
                self._on_swap()
        except BaseException:
            self.abort()
            raise
        self._finished = True
        temp_db.close()
        remove_files(temp_db.path)

    def abort(self) -> None:
        """Throw the rebuild away; the live index is untouched. Idempotent."""
        self._finished = True
        self._temp_db.close()
        remove_files(self._temp_db.path)


def _check_room(live: Path) -> None:
    """Refuse a rebuild the file system has no room for, before writing anything."""
    try:
        needed = int(live.stat().st_size * REBUILD_ROOM)
        free = shutil.disk_usage(live.parent).free
    except OSError:
        return  # no file yet (nothing to copy), or no answer: the writes will tell
    if free < needed:
        raise StoreError(
            f"{live}: a full reindex needs about {_mb(needed)} free beside the index, "
            f"{_mb(free)} are; free some space and sync again"
        )


def _mb(size: int) -> str:
    return f"{size / 1_000_000:,.1f} MB"
