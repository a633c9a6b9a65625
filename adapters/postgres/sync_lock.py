"""Adapter: SyncLock over a PostgreSQL session-level advisory lock keyed by the agent id.

The lock lives in the database, so it holds across hosts, and the server releases it when the
holding connection dies, so a crashed host never blocks the agent. The key is the first eight
bytes of the agent id's SHA-256 as a signed 64-bit integer (advisory keys share one space per
database; a collision would only serialise two agents' syncs, never mix them).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager

import structlog
from sqlalchemy import Connection

from memlane.adapters.postgres.database import PostgresDatabase

log = structlog.get_logger()


def lock_key(agent: str) -> int:
    """The advisory lock key of `agent`'s sync."""
    return int.from_bytes(hashlib.sha256(agent.encode()).digest()[:8], "big", signed=True)


class PostgresSyncLock:
    """One agent's sync lock in a `PostgresDatabase`."""

    def __init__(self, db: PostgresDatabase, agent: str) -> None:
        """Lock `agent`'s syncs in `db`."""
        self._db = db
        self._agent = agent
        self._key = lock_key(agent)

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Wait until no other session syncs the agent (logging the wait); release on exit."""
        with self._db.session() as conn:
            if not self._take(conn):
                # A warning: at the default level an `index` otherwise showed only "0/0 files"
                # for as long as the other process synced, with no word of why.
                log.warning("sync_waiting_for_other_process", agent=self._agent)
                conn.exec_driver_sql("SELECT pg_advisory_lock(%s)", (self._key,))
                log.info("sync_lock_acquired", agent=self._agent)
            try:
                yield
            finally:
                self._release(conn)

    @contextmanager
    def try_hold(self) -> Iterator[bool]:
        """Take the lock if no other session holds it, without waiting (see SyncLock)."""
        with self._db.session() as conn:
            got = self._take(conn)
            if not got:
                log.info("sync_lock_busy", agent=self._agent)
            try:
                yield got
            finally:
                if got:
                    self._release(conn)

    def _take(self, conn: Connection) -> bool:
        return bool(
            conn.exec_driver_sql("SELECT pg_try_advisory_lock(%s)", (self._key,)).scalar_one()
        )

    def _release(self, conn: Connection) -> None:
        conn.exec_driver_sql("SELECT pg_advisory_unlock(%s)", (self._key,))
