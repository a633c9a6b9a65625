"""Adapter: EventLog of one agent in the shared PostgreSQL database.

Positions are per agent and come from `memlane_agents.last_event`, advanced with an UPDATE in
the appending transaction: the row lock it takes orders concurrent appends of one agent (the
second waits for the first to commit), so positions are dense, only grow, become visible in
order and are never reused after compaction (the counter is never lowered). Events are stored
as their stable type name, `EVENT_VERSION` and a JSON record, as in the SQLite store.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TypeVar

from sqlalchemy import Connection

from memlane.adapters.postgres.database import PostgresDatabase
from memlane.adapters.postgres.meta import register_agent
from memlane.application.ports.event_log import EventLogError, RecordedEvent, recorded_from_rows
from memlane.application.ports.index_store import StoreError
from memlane.domain.events import (
    EVENT_VERSION,
    Event,
    event_to_record,
    type_name,
)

T = TypeVar("T")


class PostgresEventLog:
    """The durable, ordered event log of one agent."""

    def __init__(self, db: PostgresDatabase, agent: str) -> None:
        """Use the events and tracking rows of `agent` in `db`."""
        self._db = db
        self._agent = agent

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
        records = [
            (type_name(e), json.dumps(event_to_record(e)), e.occurred_at.isoformat())
            for e in events
        ]

        def work(conn: Connection) -> list[int]:
            register_agent(conn, self._agent)
            last = int(
                conn.exec_driver_sql(
                    "UPDATE memlane_agents SET last_event = last_event + %s WHERE agent = %s "
                    "RETURNING last_event",
                    (len(records), self._agent),
                ).scalar_one()
            )
            positions = list(range(last - len(records) + 1, last + 1))
            conn.exec_driver_sql(
                "INSERT INTO memlane_events(agent, position, type, version, data, occurred_at) "
                "SELECT %s, p, t, %s, d, o FROM unnest(%s::bigint[], %s::text[], %s::text[], "
                "%s::text[]) AS u(p, t, d, o)",
                (
                    self._agent,
                    EVENT_VERSION,
                    positions,
                    [r[0] for r in records],
                    [r[1] for r in records],
                    [r[2] for r in records],
                ),
            )
            return positions

        return self._write(work)

    def read(self, after: int = 0, limit: int = 1000) -> list[RecordedEvent]:
        """Return up to `limit` events with position greater than `after`, oldest first."""
        if limit <= 0:
            return []
        return self._read(
            lambda conn: recorded_from_rows(
                conn.exec_driver_sql(
                    "SELECT position, type, data FROM memlane_events WHERE agent = %s "
                    "AND position > %s ORDER BY position LIMIT %s",
                    (self._agent, after, limit),
                ).all()
            )
        )

    def tail(self, limit: int) -> list[RecordedEvent]:
        """Return the newest `limit` events, oldest first."""
        if limit <= 0:
            return []
        rows = self._read(
            lambda conn: conn.exec_driver_sql(
                "SELECT position, type, data FROM memlane_events WHERE agent = %s "
                "ORDER BY position DESC LIMIT %s",
                (self._agent, limit),
            ).all()
        )
        return recorded_from_rows(list(reversed(rows)))

    def last_position(self) -> int:
        """Return the highest position appended so far (0 if none)."""
        return self._read(
            lambda conn: int(
                conn.exec_driver_sql(
                    "SELECT coalesce((SELECT last_event FROM memlane_agents WHERE agent = %s), 0)",
                    (self._agent,),
                ).scalar_one()
            )
        )

    def tracked(self, handler: str) -> int:
        """Return the last position `handler` has finished (0 if none)."""
        return self._read(
            lambda conn: int(
                conn.exec_driver_sql(
                    "SELECT coalesce((SELECT position FROM memlane_tracking WHERE agent = %s "
                    "AND handler = %s), 0)",
                    (self._agent, handler),
                ).scalar_one()
            )
        )

    def track(self, handler: str, position: int) -> None:
        """Record that `handler` has finished every event up to `position` (never backwards)."""
        self._write(
            lambda conn: conn.exec_driver_sql(
                "INSERT INTO memlane_tracking(agent, handler, position) VALUES (%s, %s, %s) "
                "ON CONFLICT (agent, handler) DO UPDATE "
                "SET position = greatest(memlane_tracking.position, excluded.position)",
                (self._agent, handler, position),
            )
        )

    def compact(self, keep_last: int = 1000) -> int:
        """Delete events every tracked handler has processed, except the newest `keep_last`."""

        def work(conn: Connection) -> int:
            processed = conn.exec_driver_sql(
                "SELECT min(position) FROM memlane_tracking WHERE agent = %s", (self._agent,)
            ).scalar_one()
            if processed is None:
                return 0
            bound = int(processed)
            if keep_last > 0:
                oldest_kept = conn.exec_driver_sql(
                    "SELECT min(position) FROM (SELECT position FROM memlane_events "
                    "WHERE agent = %s AND position <= %s ORDER BY position DESC LIMIT %s) kept",
                    (self._agent, bound, keep_last),
                ).scalar_one()
                if oldest_kept is None:
                    return 0
                bound = int(oldest_kept) - 1
            result = conn.exec_driver_sql(
                "DELETE FROM memlane_events WHERE agent = %s AND position <= %s",
                (self._agent, bound),
            )
            return int(result.rowcount)

        return self._write(work)
