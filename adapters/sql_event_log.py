"""Adapters: the EventLog over SQL tables, the same for every store family.

Reading, tailing, tracking and compacting the log are one algorithm in the SQLite and the
PostgreSQL store: the same guards, the newest events read newest first and handed back oldest
first, compaction's bound below the newest `keep_last` processed events, a StoreError reported
as EventLogError. Only the statements differ (placeholders, table names, PostgreSQL's rows
scoped by agent), so this module exists to hold that algorithm once: a family passes its
statements and the parameters each of them starts with (`scope`: the agent, or nothing), and
writes `append` itself, since the two allocate positions differently. It imports no store
family, and both import it.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from sqlalchemy import Connection, CursorResult

from memlane.application.ports.event_log import EventLogError, RecordedEvent, recorded_from_rows
from memlane.application.ports.index_store import StoreError

T = TypeVar("T")


class SqlDatabase(Protocol):
    """What the log needs of a family's database: write and read transactions."""

    def write(self, work: Callable[[Connection], T]) -> T:
        """Run `work` in one write transaction."""
        ...

    def read(self) -> AbstractContextManager[Connection]:
        """A connection inside one read transaction."""
        ...


@dataclass(frozen=True)
class EventLogStatements:
    """A family's statements; each takes the log's `scope` parameters, then the ones named."""

    # (after, limit) -> rows (position, type, data) above `after`, oldest first.
    read_after: str
    # (limit) -> rows (position, type, data), newest first.
    newest: str
    # () -> the highest position ever appended, 0 when none.
    last_position: str
    # (handler) -> the handler's tracked position, 0 when none.
    tracked: str
    # (handler, position): insert or raise the handler's position, never lower it.
    track: str
    # () -> the lowest tracked position, NULL when no handler is tracked.
    min_tracked: str
    # (bound, keep_last) -> the oldest of the newest `keep_last` events at or below `bound`.
    oldest_kept: str
    # (bound): delete the events at or below `bound`.
    delete_through: str


class SqlEventLog:
    """The durable, ordered event log; a family's subclass adds `append`."""

    def __init__(
        self, db: SqlDatabase, statements: EventLogStatements, scope: tuple[object, ...] = ()
    ) -> None:
        """Run `statements` on `db`, each with `scope`'s parameters first."""
        self._db = db
        self._sql = statements
        self._scope = scope

    def _run(self, conn: Connection, statement: str, *params: object) -> CursorResult[Any]:
        return conn.exec_driver_sql(statement, (*self._scope, *params))

    def _write(self, work: Callable[[Connection], T]) -> T:
        try:
            return self._db.write(work)
        except StoreError as exc:
            raise EventLogError(str(exc)) from exc

    def _read(self, work: Callable[[Connection], T]) -> T:
        try:
            with self._db.read() as conn:
                return work(conn)
        except StoreError as exc:
            raise EventLogError(str(exc)) from exc

    def read(self, after: int = 0, limit: int = 1000) -> list[RecordedEvent]:
        """Return up to `limit` events with position greater than `after`, oldest first."""
        if limit <= 0:
            return []
        return self._read(
            lambda conn: recorded_from_rows(
                self._run(conn, self._sql.read_after, after, limit).all()
            )
        )

    def tail(self, limit: int) -> list[RecordedEvent]:
        """Return the newest `limit` events, oldest first."""
        if limit <= 0:
            return []
        rows = self._read(lambda conn: self._run(conn, self._sql.newest, limit).all())
        return recorded_from_rows(list(reversed(rows)))

    def last_position(self) -> int:
        """Return the highest position appended so far (0 if none)."""
        return self._read(lambda conn: int(self._run(conn, self._sql.last_position).scalar_one()))

    def tracked(self, handler: str) -> int:
        """Return the last position `handler` has finished (0 if none)."""
        return self._read(
            lambda conn: int(self._run(conn, self._sql.tracked, handler).scalar_one())
        )

    def track(self, handler: str, position: int) -> None:
        """Record that `handler` has finished every event up to `position` (never backwards)."""
        self._write(lambda conn: self._run(conn, self._sql.track, handler, position))

    def compact(self, keep_last: int = 1000) -> int:
        """Delete events every tracked handler has processed, except the newest `keep_last`.

        With no tracked handler, nothing counts as processed and nothing is deleted.
        """

        def work(conn: Connection) -> int:
            processed = self._run(conn, self._sql.min_tracked).scalar_one()
            if processed is None:
                return 0
            bound = int(processed)
            if keep_last > 0:
                # The newest `keep_last` processed events stay: delete below the oldest of them.
                oldest_kept = self._run(conn, self._sql.oldest_kept, bound, keep_last).scalar_one()
                if oldest_kept is None:
                    return 0
                bound = int(oldest_kept) - 1
            return int(self._run(conn, self._sql.delete_through, bound).rowcount)

        return self._write(work)
