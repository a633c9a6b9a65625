"""Adapter plumbing: one PostgreSQL database shared by many agents, its engine and transactions.

`PostgresDatabase` is shared by `PostgresIndexStore`, `PostgresEventLog` and the sync lock of
every agent a process serves. It owns the behaviours the adapters rely on:

* the URL is normalised to SQLAlchemy's psycopg 3 dialect, and only ever shown with its
  password masked (`location`); a password may also come from libpq's own environment
  (`PGPASSWORD`, `~/.pgpass`, `PGSERVICE`), so it need not appear in the configuration at all;
* every failure leaves as a port error (`StoreReadOnly` for SQLSTATE class 25006 / a hot
  standby, `StoreError` otherwise), chained to the driver's;
* `read()` and `write()` each run one transaction; reads see one snapshot (REPEATABLE READ),
  as a SQLite read transaction does; writes are READ COMMITTED, and the adapters
  make them safe for concurrent writers with row-level upserts and per-agent advisory locks
  rather than one global write lock (the SQLite family's model does not carry over);
* the schema is migrated at open, under a transaction-level advisory lock, so two hosts opening
  a fresh database at once do not both create it;
* every connection speaks pgvector's binary format (the `pgvector` package's psycopg adapters):
  a vector goes over the wire as 4 + 4·d bytes instead of ~10 characters per component, and
  neither side prints or parses decimals. Measured at 10k chunks, printing the 40 candidate
  vectors of one search as text cost ~40 ms on the server, ten times the HNSW scan itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.exc import ArgumentError, DBAPIError, SQLAlchemyError

if TYPE_CHECKING:  # the driver and pgvector are the `postgres` extra: imported when used
    from psycopg import Connection as DriverConnection
    from psycopg.rows import TupleRow

from memlane.adapters.postgres import migrations
from memlane.application.ports.index_store import StoreError, StoreReadOnly
from memlane.domain.url_passwords import mask_url_passwords

T = TypeVar("T")

_READ_ONLY_STATES = ("25006",)


def normalise_url(url: str) -> str:
    """Return `url` for SQLAlchemy's psycopg 3 dialect (`postgresql://` and `postgres://` too)."""
    for prefix in ("postgresql+psycopg://", "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    raise StoreError(f"not a PostgreSQL URL (postgresql://...): {masked(url)}")


def masked(url: str) -> str:
    """Return `url` with any password replaced by ***, for logs and messages (the one masking
    function of printed text, which also works on a URL SQLAlchemy cannot parse)."""
    return mask_url_passwords(url)


def translate(exc: BaseException, where: str) -> StoreError:
    """Map a driver or SQLAlchemy exception to the IndexStore error family."""
    if isinstance(exc, DBAPIError):
        state = getattr(exc.orig, "sqlstate", None)
        message = str(exc.orig).strip()
        if state in _READ_ONLY_STATES:
            return StoreReadOnly(f"{where}: {message}")
        return StoreError(f"{where}: {message}")
    return StoreError(f"{where}: {exc}")


def _register_vector(driver: DriverConnection[TupleRow]) -> bool:
    """Install pgvector's adapters on one driver connection; False before the extension exists."""
    from pgvector.psycopg import register_vector
    from psycopg.types import TypeInfo

    if TypeInfo.fetch(driver, "vector") is None:
        return False
    register_vector(driver)
    return True


def _on_connect(driver: DriverConnection[TupleRow], _record: object) -> None:
    # A fresh database has no `vector` type until the first migration creates it; that
    # connection is registered right after migrating (_migrate_and_register).
    _register_vector(driver)


def driver_connection(conn: Connection) -> DriverConnection[TupleRow]:
    """The psycopg connection under `conn`, in the same transaction (for binary results)."""
    from psycopg import Connection as DriverConnection

    driver = conn.connection.driver_connection
    if not isinstance(driver, DriverConnection):
        raise StoreError("the PostgreSQL store needs the psycopg 3 driver")
    return driver


def _migrate_and_register(conn: Connection) -> list[str]:
    applied = migrations.migrate(conn)
    if not _register_vector(driver_connection(conn)):
        raise StoreError("the vector type is missing after migrating (is pgvector installed?)")
    return applied


class PostgresDatabase:
    """One PostgreSQL database holding the memory of many agents."""

    def __init__(self, url: str, *, pool_size: int = 5) -> None:
        """Prefer `PostgresDatabase.open`, which also migrates the schema."""
        self._url = normalise_url(url)
        self._location = masked(self._url)
        try:
            self._engine: Engine | None = create_engine(
                self._url, pool_size=pool_size, pool_pre_ping=True, future=True
            )
        except (ArgumentError, ValueError) as exc:  # a bad port, an unclosed [ ... a usage error
            raise StoreError(
                f"invalid PostgreSQL URL {self._location}: {mask_url_passwords(str(exc))}"
            ) from exc
        event.listen(self._engine, "connect", _on_connect)

    @classmethod
    def open(cls, url: str, *, pool_size: int = 5) -> PostgresDatabase:
        """Connect to `url` and migrate the schema; StoreError (password masked) on failure."""
        db = cls(url, pool_size=pool_size)
        try:
            db.write(_migrate_and_register)
        except migrations.SchemaTooNewError as exc:
            db.close()
            raise StoreError(f"{db.location}: {exc}") from exc
        except StoreError:
            db.close()
            raise
        return db

    @property
    def location(self) -> str:
        """The URL with its password masked."""
        return self._location

    @property
    def url(self) -> str:
        """The full URL (with its password): for opening a second connection, never for logs."""
        return self._url

    @property
    def engine(self) -> Engine:
        """The engine; StoreError once closed."""
        if self._engine is None:
            raise StoreError(f"{self._location}: the database is closed")
        return self._engine

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """Yield a connection inside one REPEATABLE READ transaction: one snapshot throughout.

        READ COMMITTED would give each statement its own snapshot, so a search could count
        rows (bm25's N) before a concurrent commit and phrase hits after it.
        """
        try:
            with self.engine.connect() as conn:
                snapshot = conn.execution_options(isolation_level="REPEATABLE READ")
                with snapshot.begin():
                    yield snapshot
        except (SQLAlchemyError, OSError) as exc:
            raise translate(exc, self._location) from exc

    def write(self, work: Callable[[Connection], T]) -> T:
        """Run `work` in one transaction; commit on return, roll back on error."""
        try:
            with self.engine.connect() as conn, conn.begin():
                return work(conn)
        except (SQLAlchemyError, OSError) as exc:
            raise translate(exc, self._location) from exc

    @contextmanager
    def session(self) -> Iterator[Connection]:
        """Yield a connection outside any transaction (for session-level advisory locks)."""
        try:
            with self.engine.connect() as conn:
                autocommit = conn.execution_options(isolation_level="AUTOCOMMIT")
                yield autocommit
        except (SQLAlchemyError, OSError) as exc:
            raise translate(exc, self._location) from exc

    def close(self) -> None:
        """Release every connection; idempotent."""
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None
