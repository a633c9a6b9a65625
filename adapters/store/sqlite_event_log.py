"""Adapter: EventLog on the index's SQLite file (tables `events` and `tracking`).

Positions come from an AUTOINCREMENT key, so SQLite itself guarantees they only grow and are never
reused after compaction; `last_position` reads that high-water mark from `sqlite_sequence`.
Events are stored as their stable type name, `EVENT_VERSION` and a JSON record.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TypeVar

from sqlalchemy import Connection

from memlane.adapters.store.database import SqliteDatabase
from memlane.application.ports.event_log import EventLogError, RecordedEvent, recorded_from_rows
from memlane.application.ports.index_store import StoreError
from memlane.domain.events import (
    EVENT_VERSION,
    Event,
    event_to_record,
    type_name,
)

T = TypeVar("T")


class SqliteEventLog:
    """The durable, ordered event log in a `SqliteDatabase`."""

    def __init__(self, db: SqliteDatabase) -> None:
        """Use the events and tracking tables of `db` (shared with SqliteIndexStore)."""
        self._db = db

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

    def append(self, events: Sequence[Event]) -> list[int]:
        """Store `events` atomically; return their positions."""
        if not events:
            return []
        rows = [
            (type_name(e), EVENT_VERSION, json.dumps(event_to_record(e)), e.occurred_at.isoformat())
            for e in events
        ]

        def work(conn: Connection) -> list[int]:
            positions = []
            for row in rows:
                result = conn.exec_driver_sql(
                    "INSERT INTO events(type, version, data, occurred_at) VALUES (?, ?, ?, ?)", row
                )
                positions.append(int(result.lastrowid))
            return positions

        return self._write(work)

    def read(self, after: int = 0, limit: int = 1000) -> list[RecordedEvent]:
        """Return up to `limit` events with position greater than `after`, oldest first."""
        if limit <= 0:
            return []
        return self._read(
            lambda conn: recorded_from_rows(
                conn.exec_driver_sql(
                    "SELECT position, type, data FROM events WHERE position > ? "
                    "ORDER BY position LIMIT ?",
                    (after, limit),
                ).all()
            )
        )

    def tail(self, limit: int) -> list[RecordedEvent]:
        """Return the newest `limit` events, oldest first."""
        if limit <= 0:
            return []
        rows = self._read(
            lambda conn: conn.exec_driver_sql(
                "SELECT position, type, data FROM events ORDER BY position DESC LIMIT ?", (limit,)
            ).all()
        )
        return recorded_from_rows(list(reversed(rows)))

    def last_position(self) -> int:
        """Return the highest position appended so far (0 if none)."""
        return self._read(
            lambda conn: int(
                conn.exec_driver_sql(
                    "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0)"
                ).scalar_one()
            )
        )

    def tracked(self, handler: str) -> int:
        """Return the last position `handler` has finished (0 if none)."""
        return self._read(
            lambda conn: int(
                conn.exec_driver_sql(
                    "SELECT coalesce((SELECT position FROM tracking WHERE handler = ?), 0)",
                    (handler,),
                ).scalar_one()
            )
        )

    def track(self, handler: str, position: int) -> None:
        """Record that `handler` has finished every event up to `position` (never backwards)."""
        self._write(
            lambda conn: conn.exec_driver_sql(
                "INSERT INTO tracking(handler, position) VALUES (?, ?) "
                "ON CONFLICT(handler) DO UPDATE SET position = max(position, excluded.position)",
                (handler, position),
            )
        )

    def compact(self, keep_last: int = 1000) -> int:
        """Delete events every tracked handler has processed, except the newest `keep_last`.

        With no tracked handler, nothing counts as processed and nothing is deleted.
        """

        def work(conn: Connection) -> int:
            processed = conn.exec_driver_sql("SELECT min(position) FROM tracking").scalar_one()
            if processed is None:
                return 0
            bound = int(processed)
            if keep_last > 0:
                # The newest `keep_last` processed events stay: delete below the oldest of them.
                oldest_kept = conn.exec_driver_sql(
                    "SELECT min(position) FROM (SELECT position FROM events WHERE position <= ? "
                    "ORDER BY position DESC LIMIT ?)",
                    (bound, keep_last),
                ).scalar_one()
                if oldest_kept is None:
                    return 0
                bound = int(oldest_kept) - 1
            result = conn.exec_driver_sql("DELETE FROM events WHERE position <= ?", (bound,))
            return int(result.rowcount)

        return self._write(work)
