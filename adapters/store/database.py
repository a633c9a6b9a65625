"""Adapter plumbing: one SQLite index file, its engine, transactions and error translation.

`SqliteDatabase` is shared by `SqliteIndexStore` and `SqliteEventLog` (they live in one file, so a
rebuild can carry the event log over). It owns three behaviours the adapters rely on:

* every failure leaves as a port error (`StoreCorrupt`, `StoreReadOnly`, `StoreError`), chained;
* writes run in `BEGIN IMMEDIATE` transactions, serialised in-process by a lock, and a write that
  fails with "attempt to write a readonly database" reopens the engine and is retried once
  (a stale handle after the file was replaced or remounted), counted in `recovery_stats()`;
* the file at `path` may be replaced by a rebuild: each connection remembers the inode it opened,
  and an operation that finds another inode at `path` drops the pool and reconnects.

`write` waits up to the busy timeout for another process's write lock; `write_if_free` does not
wait (for the notes a search leaves for the next process, which are savings, not duties).
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import sqlean
import structlog
from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from memlane.adapters.store import migrations, reconcile
from memlane.adapters.store.engine import (
    BEGIN_OPTION,
    BUSY_TIMEOUT_MS,
    VectorExtension,
    open_engine,
)
from memlane.adapters.store.temp_files import remove_abandoned_temps
from memlane.application.ports.index_store import StoreCorrupt, StoreError, StoreReadOnly
from memlane.application.reports import RecoveryStats

log = structlog.get_logger()

T = TypeVar("T")

_READ_ONLY = re.compile(
    r"attempt to write a readonly database|database is read-only|SQLITE_READONLY|readonly",
    re.IGNORECASE,
)
_CORRUPT = re.compile(
    r"file is not a database|database disk image is malformed|file is encrypted|malformed",
    re.IGNORECASE,
)
# What SQLite says when the file exists but cannot be opened for writing (read-only file system
# or folder: the -shm / -wal files cannot be created; a read-only file).
_CANNOT_WRITE = re.compile(r"unable to open database file|readonly|read-only", re.IGNORECASE)
# Another connection holds the write lock (SQLITE_BUSY), said when no busy wait is allowed.
_BUSY = re.compile(r"database is locked|SQLITE_BUSY", re.IGNORECASE)
_MAX_STALE_RETRIES = 3
# Raw driver errors can escape when an adapter uses the DB-API cursor directly for bulk work.
DRIVER_ERRORS: tuple[type[Exception], ...] = (SQLAlchemyError, sqlite3.Error, sqlean.Error)


def translate(exc: BaseException, path: Path) -> StoreError:
    """Map a driver or SQLAlchemy exception to the IndexStore error family."""
    message = str(exc.orig) if isinstance(exc, DBAPIError) else str(exc)
    if _CORRUPT.search(message):
        return StoreCorrupt(f"{path}: {message}")
    if _READ_ONLY.search(message):
        return StoreReadOnly(f"{path}: {message}")
    if _BUSY.search(message) and _emptied(path):
        # An emptied file looks new, and making it a WAL database needs every other
        # connection gone: one in a running process waits forever, so say which.
        return StoreError(
            f"{path}: {message}: the index file is empty (0 bytes) while another process has "
            "it open (a running `memlane watch`, `serve`, `mcp` or daemon); stop it and run "
            "again, and the index is built anew from the workspace"
        )
    return StoreError(f"{path}: {message}")


def _emptied(path: Path) -> bool:
    """The file is 0 bytes with no write-ahead log holding pages (a new index being written
    has them there before its first checkpoint)."""
    try:
        if path.stat().st_size != 0:
            return False
    except OSError:
        return False
    try:
        return path.with_name(path.name + "-wal").stat().st_size == 0
    except FileNotFoundError:
        return True
    except OSError:
        return False


class SqliteDatabase:
    """One memlane index file opened through SQLAlchemy with sqlite-vec (when it loads)."""

    def __init__(self, path: Path, *, load_vector: bool = True) -> None:
        """Prefer `SqliteDatabase.open`, which also migrates the schema."""
        self.path = path
        # The index's name in reports (`location()`); a stand-in names the file it stands for.
        self.label = path
        self._load_vector = load_vector
        self._engine: Engine | None = None
        self._vector = VectorExtension()
        self._write_lock = threading.RLock()
        self._attempts = 0
        self._successes = 0
        self._failures = 0
        self._last_error: str | None = None
        self._closed = False
        self._read_only = False

    @classmethod
    def open(cls, path: str | Path, *, load_vector: bool = True) -> SqliteDatabase:
        """Open (creating if needed) and migrate the index file at `path`.

        Raises StoreCorrupt (the file is left in place) if it is not a usable database.
        """
        db = cls(Path(path), load_vector=load_vector)
        db.initialise()
        return db

    # --- lifecycle -----------------------------------------------------------------------------

    def initialise(self) -> None:
        """Migrate the schema and reconcile derived tables; only writes when there is work.
        Also removes the temporary databases of rebuilds killed earlier (`temp_files`)."""
        # A read-only folder: nothing a dead rebuild left can be removed there anyway.
        with contextlib.suppress(OSError):
            remove_abandoned_temps(self.path)
        try:
            self._open_readable()
            with self.read() as conn:
                version = migrations.schema_version(conn)
            if version != len(migrations.MIGRATIONS):
                self._migrate(version)
            vector_loaded = self.vector_status()[0]
            with self.read() as conn:
                todo = reconcile.needs_reconcile(conn, vector_loaded)
            if todo and self._read_only:
                # Derived tables of another analysis (a keyword table of an older version): a
                # read-only index is searched with them as they are, not refused.
                log.warning(
                    "index_derived_tables_outdated",
                    path=str(self.path),
                    note="searched as it is; brought up to date once the file can be written",
                )
            elif todo:
                self.write(lambda conn: reconcile.reconcile(conn, vector_loaded))
        except migrations.SchemaTooNewError as exc:
            self.close()
            raise StoreError(f"{self.path}: {exc}") from exc
        except StoreError:
            self.close()
            raise

    def _migrate(self, version: int) -> None:
        latest = len(migrations.MIGRATIONS)
        if version > latest:  # said before any write is tried: no write could help
            raise migrations.SchemaTooNewError(
                f"store schema {version} is newer than this memlane ({latest})"
            )
        try:
            applied = self.write(migrations.migrate)
        except StoreReadOnly as exc:
            if not version:  # no memlane index at all (an empty or foreign file): as it is
                raise
            # Searching a read-only index works, but not one in an older layout: say why.
            raise StoreReadOnly(
                f"{self.path}: made by an older memlane (index schema {version}, this one "
                f"{latest}) and needs a one-time upgrade, which writes the "
                "file, but it cannot be written: make the file and its folder writable once, "
                f"or search it with the memlane that made it ({exc})"
            ) from exc
        if version and applied:  # not a new file (nor one another process just upgraded)
            log.warning(
                "index_upgraded",
                path=str(self.path),
                from_schema=version,
                to_schema=latest,
                note="memlane versions older than this one can no longer open the file",
            )

    def _open_readable(self) -> None:
        """Connect once; a file that exists but cannot be written is opened read-only.

        Searching needs no write (issue #14): on a read-only file system the index still
        answers, and every write fails with StoreReadOnly, which a sync reports once.
        """
        try:
            with self.read():
                return
        except StoreError as exc:
            if self._read_only or not self.path.is_file() or not _CANNOT_WRITE.search(str(exc)):
                raise
        self.reset()
        self._read_only = True
        with self.read():
            return

    @property
    def read_only(self) -> bool:
        """Whether the file was opened read-only (it could not be opened for writing)."""
        return self._read_only

    @classmethod
    def peek_meta(cls, path: str | Path, key: str) -> str | None:
        """Read one `meta` value of an existing index without migrating or creating anything.

        None when there is no file, no meta table or no such key.
        """
        file = Path(path)
        if not file.is_file():
            return None
        db = cls(file, load_vector=False)
        try:
            db._open_readable()
            with db.read() as conn:
                if not conn.exec_driver_sql(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
                ).first():
                    return None
                row = conn.exec_driver_sql("SELECT value FROM meta WHERE key = ?", (key,)).first()
            return None if row is None else str(row[0])
        finally:
            db.close()

    @property
    def engine(self) -> Engine:
        """The current engine (created lazily, replaced after a reopen)."""
        if self._closed:
            raise StoreError(f"{self.path}: the database is closed")
        if self._engine is None:
            self._engine, self._vector = open_engine(
                self.path, load_vector=self._load_vector, read_only=self._read_only
            )
        return self._engine

    @property
    def load_vector(self) -> bool:
        """Whether connections try to load sqlite-vec."""
        return self._load_vector

    @contextmanager
    def raw(self) -> Iterator[Any]:
        """Yield a DB-API connection in autocommit mode (for ATTACH, backup, checkpoints)."""
        try:
            pooled = self.engine.raw_connection()
            try:
                yield pooled.driver_connection
            finally:
                pooled.close()
        except DRIVER_ERRORS as exc:
            raise translate(exc, self.path) from exc

    def vector_status(self) -> tuple[bool, str | None]:
        """Return (sqlite-vec loaded, error message), connecting once if needed."""
        if not self._load_vector:
            return False, "vector extension disabled"
        if self._engine is None and not self._closed:
            with self.read():
                pass
        return self._vector.loaded, self._vector.error

    def reset(self) -> None:
        """Drop every pooled connection; the next operation reconnects."""
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None

    def close(self) -> None:
        """Release every connection; idempotent."""
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None
        self._closed = True

    def recovery_stats(self) -> RecoveryStats:
        """Return the read-only recovery counters."""
        return RecoveryStats(
            attempts=self._attempts,
            successes=self._successes,
            failures=self._failures,
            last_error=self._last_error,
        )

    @contextmanager
    def write_lock(self) -> Iterator[None]:
        """Hold the in-process write lock (a rebuild commit holds it across its swap)."""
        with self._write_lock:
            yield

    # --- transactions --------------------------------------------------------------------------

    def vanished(self) -> str | None:
        """Why the open file is no longer at `path` (deleted, or its folder), None while it is.
        SQLite goes on reading and writing the deleted file, so nothing else would show it."""
        if self._engine is None or self.label != self.path:
            return None  # not opened yet, or a stand-in's temporary file
        if self.path.exists():
            return None
        return (
            f"the index file {self.path} was deleted while memlane had it open: searches answer "
            "from the open copy, and what is indexed now is lost when this process stops; "
            "restart memlane to index the files again"
        )

    def _is_stale(self, conn: Connection) -> bool:
        try:
            current = self.path.stat().st_ino
        except OSError:
            return False
        return conn.info.get("inode") not in (None, current)

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """Yield a connection inside a deferred (snapshot) transaction."""
        try:
            for _ in range(_MAX_STALE_RETRIES):
                with self.engine.connect() as conn:
                    if self._is_stale(conn):
                        conn.invalidate()
                        self.reset()
                        continue
                    with conn.begin():
                        yield conn
                    return
            raise StoreError(f"{self.path}: the file keeps being replaced")
        except DRIVER_ERRORS as exc:
            raise translate(exc, self.path) from exc

    def _write_once(self, work: Callable[[Connection], T]) -> T:
        with self._write_lock:
            for _ in range(_MAX_STALE_RETRIES):
                with self.engine.connect() as conn:
                    immediate = conn.execution_options(**{BEGIN_OPTION: "IMMEDIATE"})
                    with immediate.begin() as tx:
                        if self._is_stale(conn):
                            tx.rollback()
                            conn.invalidate()
                            self.reset()
                            continue
                        return work(immediate)
            raise StoreError(f"{self.path}: the file keeps being replaced")

    def _check_writable(self) -> None:
        if self._read_only:
            raise StoreReadOnly(
                f"{self.path}: read-only (the file or its folder cannot be written)"
            )

    def write_if_free(self, work: Callable[[Connection], T]) -> T | None:
        """Run `work` as `write` does, but only if no other writer holds the database now;
        None when one does. For a note that spares a later process some work (adapters/
        piece_walk.py, progress_notes.py): a search must not wait up to the busy timeout
        behind another process's long write for it."""
        self._check_writable()
        if not self._write_lock.acquire(blocking=False):
            return None
        try:
            with self.engine.connect() as conn:
                if self._is_stale(conn):
                    return None  # the file was just swapped: the next process notes it
                # On the driver's connection: through SQLAlchemy the pragma would begin a
                # transaction of its own before ours.
                driver = conn.connection.dbapi_connection
                assert driver is not None  # a checked-out connection always has one
                driver.execute("PRAGMA busy_timeout = 0")
                try:
                    immediate = conn.execution_options(**{BEGIN_OPTION: "IMMEDIATE"})
                    with immediate.begin():
                        return work(immediate)
                finally:
                    driver.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        except DRIVER_ERRORS as exc:
            if _BUSY.search(str(exc)):
                return None
            raise translate(exc, self.path) from exc
        finally:
            self._write_lock.release()

    def write(self, work: Callable[[Connection], T]) -> T:
        """Run `work` in one BEGIN IMMEDIATE transaction; commit on return, roll back on error.

        A read-only failure reopens the engine and retries once (counted in `recovery_stats`).
        """
        self._check_writable()
        try:
            return self._write_once(work)
        except DRIVER_ERRORS as exc:
            error = translate(exc, self.path)
            if not isinstance(error, StoreReadOnly):
                raise error from exc
            first = exc
        self._attempts += 1
        self._last_error = str(first)
        self.reset()
        try:
            result = self._write_once(work)
        except DRIVER_ERRORS as exc:
            self._failures += 1
            self._last_error = str(exc)
            raise translate(exc, self.path) from exc
        self._successes += 1
        return result
