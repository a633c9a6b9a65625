"""Adapter: EventLog of one agent in the shared PostgreSQL database.

Positions are per agent and come from `memlane_agents.last_event`, advanced with an UPDATE in
the appending transaction: the row lock it takes orders concurrent appends of one agent (the
second waits for the first to commit), so positions are dense, only grow, become visible in
order and are never reused after compaction (the counter is never lowered). Events are stored
as their stable type name, `EVENT_VERSION` and a JSON record, as in the SQLite store. Reading,
tracking and compaction are the shared SqlEventLog's (adapters/sql_event_log.py), on the
statements below.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from sqlalchemy import Connection

from memlane.adapters.postgres.database import PostgresDatabase
from memlane.adapters.postgres.meta import register_agent
from memlane.adapters.sql_event_log import EventLogStatements, SqlEventLog
from memlane.domain.events import EVENT_VERSION, Event, event_to_record, type_name

# Every statement starts with the agent's id (the log's scope).
_STATEMENTS = EventLogStatements(
    read_after="SELECT position, type, data FROM memlane_events WHERE agent = %s "
    "AND position > %s ORDER BY position LIMIT %s",
    newest="SELECT position, type, data FROM memlane_events WHERE agent = %s "
    "ORDER BY position DESC LIMIT %s",
    last_position="SELECT coalesce((SELECT last_event FROM memlane_agents WHERE agent = %s), 0)",
    tracked="SELECT coalesce((SELECT position FROM memlane_tracking WHERE agent = %s "
    "AND handler = %s), 0)",
    track="INSERT INTO memlane_tracking(agent, handler, position) VALUES (%s, %s, %s) "
    "ON CONFLICT (agent, handler) DO UPDATE "
    "SET position = greatest(memlane_tracking.position, excluded.position)",
    min_tracked="SELECT min(position) FROM memlane_tracking WHERE agent = %s",
    oldest_kept="SELECT min(position) FROM (SELECT position FROM memlane_events "
    "WHERE agent = %s AND position <= %s ORDER BY position DESC LIMIT %s) kept",
    delete_through="DELETE FROM memlane_events WHERE agent = %s AND position <= %s",
)


class PostgresEventLog(SqlEventLog):
    """The durable, ordered event log of one agent."""

    def __init__(self, db: PostgresDatabase, agent: str) -> None:
        """Use the events and tracking rows of `agent` in `db`."""
        super().__init__(db, _STATEMENTS, scope=(agent,))
        self._agent = agent

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
