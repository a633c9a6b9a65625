"""SQLite: the record of a first index being written into the live database, file by file.

One `meta` row (`first_index`): who writes it (`processes.this_process`), how many files it
found and the IndexMeta it builds. It is written when the first index starts and deleted in
the transaction that stores the finished index's meta, so "a record and no index meta" is
exactly "a first index under way or interrupted". Files done are the `files` table's rows.
"""

from __future__ import annotations

import json
from typing import Final

from sqlalchemy import Connection

from memlane.adapters.store import meta_table
from memlane.adapters.store.processes import running_here, this_process
from memlane.application.ports.index_store import FirstIndexState
from memlane.domain.index_meta import IndexMeta, index_meta_from_json, index_meta_to_json

FIRST_INDEX_KEY: Final = "first_index"


def state(conn: Connection) -> FirstIndexState | None:
    """The first index recorded in this database, None when none is."""
    value = meta_table.get(conn, FIRST_INDEX_KEY)
    if value is None:
        return None
    record = json.loads(value)
    owner = str(record["owner"])
    here = owner == this_process()
    done = conn.exec_driver_sql("SELECT count(*) FROM files").scalar_one()
    return FirstIndexState(
        meta=index_meta_from_json(str(record["meta"])),
        files_total=int(record["files"]),
        files_done=int(done),
        running=here or running_here(owner),
        here=here,
    )


def claim(conn: Connection, meta: IndexMeta, files_total: int) -> bool:
    """Record this process as the first index's writer, unless another live process is."""
    current = state(conn)
    if current is not None and current.running_elsewhere:
        return False
    record = {"owner": this_process(), "files": files_total, "meta": index_meta_to_json(meta)}
    meta_table.put(conn, FIRST_INDEX_KEY, json.dumps(record))
    return True


def finish(conn: Connection) -> None:
    """Forget the record (the index meta is being written in the same transaction)."""
    conn.exec_driver_sql("DELETE FROM meta WHERE key = ?", (FIRST_INDEX_KEY,))
