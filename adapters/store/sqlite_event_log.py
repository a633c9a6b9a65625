"""Adapter: EventLog on the index's SQLite file (tables `events` and `tracking`).

Positions come from an AUTOINCREMENT key, so SQLite itself guarantees they only grow and are never
reused after compaction; `last_position` reads that high-water mark from `sqlite_sequence`.
Events are stored as their stable type name, `EVENT_VERSION` and a JSON record. Only `append`
is written here: the rest is SqlEventLog (adapters/sql_event_log.py) running `_STATEMENTS`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from sqlalchemy import Connection

from memlane.adapters.sql_event_log import EventLogStatements, SqlEventLog
from memlane.adapters.store.database import SqliteDatabase
from memlane.domain.events import EVENT_VERSION, Event, event_to_record, type_name

_STATEMENTS = EventLogStatements(
    read_after="SELECT position, type, data FROM events WHERE position > ? "
    "ORDER BY position LIMIT ?",
    newest="SELECT position, type, data FROM events ORDER BY position DESC LIMIT ?",
    last_position="SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0)",
    tracked="SELECT coalesce((SELECT position FROM tracking WHERE handler = ?), 0)",
    track="INSERT INTO tracking(handler, position) VALUES (?, ?) "
    "ON CONFLICT(handler) DO UPDATE SET position = max(position, excluded.position)",
    min_tracked="SELECT min(position) FROM tracking",
    oldest_kept="SELECT min(position) FROM (SELECT position FROM events WHERE position <= ? "
    "ORDER BY position DESC LIMIT ?)",
    delete_through="DELETE FROM events WHERE position <= ?",
)


class SqliteEventLog(SqlEventLog):
    """The durable, ordered event log in a `SqliteDatabase`."""

    def __init__(self, db: SqliteDatabase) -> None:
        """Use the events and tracking tables of `db` (shared with SqliteIndexStore)."""
        super().__init__(db, _STATEMENTS)

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
