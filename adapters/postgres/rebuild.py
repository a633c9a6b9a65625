"""Adapter: a full reindex of one agent, written under a temporary agent id and moved in at once.

The rebuild writes through an IndexWriter serving `<agent>#rebuild-<uuid>` (the store passes a
PostgresIndexStore), so the live rows are untouched while it runs and readers keep searching
them. `commit` is one transaction: the live agent's files, chunks, postings and meta are deleted
and the temporary rows are re-labelled with the live id; readers see the old index or the new
one, never a mix. The event log, handler tracking and the embedding cache are not part of the
swap: the rebuild reads and writes the live agent's cache directly (the cache is keyed by
content, so sharing it is harmless), and the log and positions simply stay where they are.

A process that dies mid-rebuild leaves rows under its temporary id; they are invisible to the
live agent and are deleted when the next rebuild of the same agent commits (one sync per agent
runs at a time, so no other rebuild of it can be in progress then).
"""

from __future__ import annotations

from sqlalchemy import Connection

from memlane.adapters.postgres import maintenance
from memlane.adapters.postgres.database import PostgresDatabase
from memlane.adapters.postgres.meta import LAST_SYNC_KEY, WORKSPACE_KEY_PREFIX
from memlane.adapters.rebuild_writes import RebuildWrites
from memlane.application.ports.index_store import IndexWriter

_SWAPPED_TABLES = (
    "memlane_postings",
    "memlane_chunks",
    "memlane_files",
    "memlane_meta",
    "memlane_keyword_stats",
    "memlane_chunk_pieces",
)


WORKSPACE_PATTERN = WORKSPACE_KEY_PREFIX.replace("_", "\\_") + "%"
# Meta rows of the live agent a swap keeps unless the rebuild wrote its own: every host's
# workspace record, and the last sync's record (until the rebuilding sync records itself; a
# rebuild killed after its swap left "last sync: never").
_KEPT = "(m.key LIKE %s OR m.key = %s)"


def _delete_agent_rows(conn: Connection, agent: str, *, keep_workspaces: bool = False) -> None:
    for table in _SWAPPED_TABLES:
        if keep_workspaces and table == "memlane_meta":
            conn.exec_driver_sql(
                f"DELETE FROM memlane_meta m WHERE m.agent = %s AND NOT {_KEPT}",
                (agent, WORKSPACE_PATTERN, LAST_SYNC_KEY),
            )
        else:
            conn.exec_driver_sql(f"DELETE FROM {table} WHERE agent = %s", (agent,))


class PostgresIndexRebuild(RebuildWrites):
    """A full reindex of `live` being written under the temporary agent id `shadow`.

    Its writer reads and writes the live agent's embedding cache (`cache_agent`), not its own.
    """

    def __init__(
        self, db: PostgresDatabase, *, live: str, shadow: str, writer: IndexWriter
    ) -> None:
        """Write through `writer` (serving `shadow`); commit moves its rows to `live`."""
        super().__init__(
            writer, closed_message=f"rebuild {shadow} was already committed or aborted"
        )
        self._db = db
        self._live = live
        self._shadow = shadow

    def commit(self) -> None:
        """Replace the live agent's index with the rebuilt one in one transaction."""
        self._check_open()
        live, shadow = self._live, self._shadow

        def work(conn: Connection) -> None:
            # Other hosts' workspace records survive the swap; the rebuild's own host's is new.
            conn.exec_driver_sql(
                f"DELETE FROM memlane_meta m WHERE m.agent = %s AND {_KEPT} AND EXISTS "
                "(SELECT 1 FROM memlane_meta s WHERE s.agent = %s AND s.key = m.key)",
                (live, WORKSPACE_PATTERN, LAST_SYNC_KEY, shadow),
            )
            _delete_agent_rows(conn, live, keep_workspaces=True)
            for table in _SWAPPED_TABLES:
                conn.exec_driver_sql(
                    f"UPDATE {table} SET agent = %s WHERE agent = %s", (live, shadow)
                )
            for (stale,) in conn.exec_driver_sql(
                "SELECT agent FROM memlane_meta WHERE agent LIKE %s "
                "UNION SELECT agent FROM memlane_files WHERE agent LIKE %s",
                (abandoned_pattern(live), abandoned_pattern(live)),
            ).all():
                _delete_agent_rows(conn, str(stale))

        self._db.write(work)
        self._finished = True
        maintenance.refresh_after_bulk_write(self._db)

    def abort(self) -> None:
        """Throw the temporary rows away; the live index stays as it was."""
        if self._finished:
            return
        self._db.write(lambda conn: _delete_agent_rows(conn, self._shadow))
        self._finished = True


def abandoned_pattern(agent: str) -> str:
    """LIKE pattern of the temporary ids of `agent`'s rebuilds."""
    escaped = agent.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"{escaped}#rebuild-%"
