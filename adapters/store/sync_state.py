"""Adapter plumbing: what the syncs leave behind for a later process (issue #14).

* the per-file problems, in the `issues` table (migration m005), so `status` in a new process
  shows every problem and not only those of files that happened to be read again;
* the last sync that changed the index, as JSON in `meta` under `last_sync`, so `status` in a
  new process can say when the index was last brought up to date and by what.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final

from sqlalchemy import Connection

from memlane.adapters.store import meta_table
from memlane.application.ports.index_store import RecordedIssue, SyncRecord

LAST_SYNC_KEY: Final = "last_sync"


def issues(conn: Connection) -> list[RecordedIssue]:
    """Return every recorded problem, sorted by key then path."""
    rows = conn.exec_driver_sql(
        "SELECT key, path, reason, mtime, size FROM issues ORDER BY key, path"
    ).all()
    return [
        RecordedIssue(
            key=str(key),
            path=str(path),
            reason=str(reason),
            mtime=None if mtime is None else float(mtime),
            size=None if size is None else int(size),
        )
        for key, path, reason, mtime, size in rows
    ]


def replace_issues(conn: Connection, recorded: Sequence[RecordedIssue]) -> None:
    """Replace the whole table with `recorded` (the caller's transaction makes it atomic)."""
    conn.exec_driver_sql("DELETE FROM issues")
    if recorded:
        conn.exec_driver_sql(
            "INSERT OR REPLACE INTO issues(key, path, reason, mtime, size) VALUES (?, ?, ?, ?, ?)",
            [(i.key, i.path, i.reason, i.mtime, i.size) for i in recorded],
        )


def last_sync(conn: Connection) -> SyncRecord | None:
    """Return the recorded last sync; None when none was recorded or the value is unreadable."""
    value = meta_table.get(conn, LAST_SYNC_KEY)
    if value is None:
        return None
    try:
        data = json.loads(value)
        return SyncRecord(
            finished_at=str(data["finished_at"]),
            reason=str(data["reason"]),
            full_reindex=bool(data["full_reindex"]),
            files_indexed=int(data["files_indexed"]),
            files_removed=int(data["files_removed"]),
            files_held_back=int(data.get("files_held_back", 0)),  # absent before it was kept
        )
    except (ValueError, KeyError, TypeError):  # a status line is not worth failing over
        return None


def record_sync(conn: Connection, record: SyncRecord) -> None:
    """Record `record` as the last sync."""
    meta_table.put(
        conn,
        LAST_SYNC_KEY,
        json.dumps(
            {
                "finished_at": record.finished_at,
                "reason": record.reason,
                "full_reindex": record.full_reindex,
                "files_indexed": record.files_indexed,
                "files_removed": record.files_removed,
                "files_held_back": record.files_held_back,
            }
        ),
    )
