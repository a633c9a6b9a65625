"""Adapter plumbing: fresh planner statistics and visibility maps after a bulk write.

Autovacuum analyses a table once about 10 % of its rows changed, but only on its next round
(a minute by default, later on a busy server). Right after a first sync, a rebuild or a
`store copy` of thousands of chunks the planner still plans for the old, small tables, and the
index-only scans the keyword leg relies on (the agent's row count and token total, the chunk
lookups of the BM25 head) still visit the heap, because only VACUUM sets the visibility map.
Measured at 10k chunks: the statistics query fell from 20 ms to 2 ms after VACUUM (ANALYZE).

So after such a write the store runs VACUUM (ANALYZE) itself on the chunk and posting tables
whose rows changed by more than max(1000, 10 %) since their last analyse (the server's own
change counters). SKIP_LOCKED: a table another host is vacuuming is left to that host rather
than waited for. A role that does not own the tables gets a server warning and no vacuum; the
store logs the failure of the command itself and carries on (autovacuum still runs).
"""

from __future__ import annotations

from typing import Final

import structlog
from sqlalchemy import Connection

from memlane.adapters.postgres.database import PostgresDatabase
from memlane.application.ports.index_store import StoreError

log = structlog.get_logger()

TABLES: Final = ("memlane_chunks", "memlane_postings")
MIN_CHANGED: Final = 1000
FRACTION: Final = 0.1


def stale_tables(conn: Connection) -> list[str]:
    """Return the tables of `TABLES` whose rows changed enough since their last analyse."""
    rows = conn.exec_driver_sql(
        "SELECT relname, n_live_tup, n_mod_since_analyze FROM pg_stat_user_tables "
        "WHERE relname = ANY(%s) AND schemaname = current_schema() ORDER BY relname",
        (list(TABLES),),
    ).all()
    return [
        str(name)
        for name, live, changed in rows
        if int(changed) >= max(MIN_CHANGED, FRACTION * int(live))
    ]


def refresh_after_bulk_write(db: PostgresDatabase) -> list[str]:
    """VACUUM (ANALYZE) the tables a bulk write left stale; return their names."""
    try:
        with db.session() as conn:
            stale = stale_tables(conn)
            if stale:
                conn.exec_driver_sql(f"VACUUM (ANALYZE, SKIP_LOCKED) {', '.join(stale)}")
    except StoreError as exc:
        log.warning("postgres_vacuum_failed", error=str(exc))
        return []
    if stale:
        log.info("postgres_tables_analysed", tables=stale)
    return stale
