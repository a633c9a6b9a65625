"""Adapter plumbing: the SQLAlchemy engine over an extension-capable SQLite driver.

The interpreter's `sqlite3` may be built without `enable_load_extension` (this machine's is), so
sqlite-vec could never load through it; `sqlean` (sqlean-py) ships its own SQLite that can. Every
new DB-API connection gets the same treatment ("connect" event): sqlite-vec loaded, WAL journal,
a busy timeout, `synchronous=NORMAL`, and autocommit handed to SQLAlchemy's explicit BEGIN so that
transactions mean what they say (pysqlite's implicit BEGIN would otherwise start them late).
"""

from __future__ import annotations

import importlib.util
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import quote

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.pool import ConnectionPoolEntry

BUSY_TIMEOUT_MS = 10_000
# Measured with bench/studies/pragma_sweep.py at 100k chunks (results/pragma_sweep.json): 256 MiB
# of mmap
# takes the vec0 top-10 from 65 to 57 ms; the default search path (numpy matrix + FTS5) and insert
# speed stay within noise (hybrid p50 21-24 ms) whatever the page cache. Both are ceilings per
# connection, not allocations, so the larger values cost nothing on small indexes.
CACHE_SIZE_KIB = 64 * 1024
MMAP_SIZE = 256 * 1024 * 1024
BEGIN_OPTION = "memlane_begin"


def _driver() -> ModuleType:
    """Return the DB-API module: the standard one when it can load extensions, else sqlean."""
    probe = sqlite3.connect(":memory:")
    try:
        if hasattr(probe, "enable_load_extension"):
            return sqlite3
    finally:
        probe.close()
    import sqlean

    module: ModuleType = sqlean
    return module


@dataclass(slots=True)
class VectorExtension:
    """Whether sqlite-vec loaded on the connections of one engine, and why not."""

    loaded: bool = False
    error: str | None = None


def _vec0_path() -> str:
    """The sqlite-vec extension's file (without its suffix, which SQLite adds), found without
    importing the `sqlite_vec` package: its `__init__` imports numpy (~0.1 s of every CLI start)
    for helpers memlane does not use."""
    spec = importlib.util.find_spec("sqlite_vec")
    folders = None if spec is None else spec.submodule_search_locations
    if not folders:
        raise ModuleNotFoundError("No module named 'sqlite_vec'")
    return str(Path(next(iter(folders))) / "vec0")


def _load_vector_extension(dbapi_connection: Any, status: VectorExtension) -> None:
    try:
        extension = _vec0_path()
        dbapi_connection.enable_load_extension(True)
        try:
            dbapi_connection.load_extension(extension)
        finally:
            dbapi_connection.enable_load_extension(False)
    except Exception as exc:  # any failure means "no extension": fall back, report why
        status.loaded = False
        status.error = f"{type(exc).__name__}: {exc}"
    else:
        status.loaded = True
        status.error = None


def open_engine(
    path: str | os.PathLike[str], *, load_vector: bool = True, read_only: bool = False
) -> tuple[Engine, VectorExtension]:
    """Create the engine for the SQLite file at `path` (created if missing).

    `read_only` opens the file as `immutable`: SQLite then neither locks nor needs the `-shm`
    and `-wal` files it could not create on a read-only file system or folder; nothing can
    write the file there anyway, so nothing can change under the reader.

    Returns the engine and the live status of the vector extension (updated on each connect).
    Each checked-out connection records the inode it opened in `connection.info["inode"]`, so a
    caller can tell that the file at `path` was replaced by another one since.
    """
    file = Path(path)
    status = VectorExtension(error=None if load_vector else "vector extension disabled")
    url = (
        f"sqlite:///file:{quote(str(file))}?immutable=1&uri=true"
        if read_only
        else f"sqlite:///{file}"
    )
    engine = create_engine(
        url,
        module=_driver(),
        connect_args={"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000},
        pool_size=4,
        max_overflow=8,
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, record: ConnectionPoolEntry) -> None:
        dbapi_connection.isolation_level = None
        if load_vector:
            _load_vector_extension(dbapi_connection, status)
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            if not read_only:  # setting the journal mode may write the header
                cursor.execute("PRAGMA journal_mode = WAL")
                cursor.execute("PRAGMA synchronous = NORMAL")
            cursor.execute("PRAGMA foreign_keys = OFF")
            cursor.execute(f"PRAGMA cache_size = -{CACHE_SIZE_KIB}")
            cursor.execute(f"PRAGMA mmap_size = {MMAP_SIZE}")
            cursor.execute("PRAGMA temp_store = MEMORY")
        finally:
            cursor.close()
        try:
            record.info["inode"] = file.stat().st_ino
        except OSError:
            record.info["inode"] = None

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        mode = conn.get_execution_options().get(BEGIN_OPTION, "DEFERRED")
        conn.exec_driver_sql(f"BEGIN {mode}")

    return engine, status
