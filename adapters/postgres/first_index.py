"""Adapter plumbing: the record of a first index being written into an agent's rows.

Whether its writer still runs is not known from the record (`running` None): every sync of the
agent holds the SyncLock, so a sync never meets the record of a running writer, and a record it
meets is an interrupted first index to complete.
"""

from __future__ import annotations

import json
import os
import socket

from sqlalchemy import Connection

from memlane.adapters.postgres import meta as meta_rows
from memlane.adapters.postgres import rows
from memlane.application.ports.index_store import FirstIndexState
from memlane.domain.index_meta import IndexMeta, index_meta_from_json, index_meta_to_json


def state(conn: Connection, agent: str) -> FirstIndexState | None:
    """The agent's first index under way, or None."""
    value = meta_rows.get(conn, agent, meta_rows.FIRST_INDEX_KEY)
    if value is None:
        return None
    record = json.loads(value)
    return FirstIndexState(
        meta=index_meta_from_json(str(record["meta"])),
        files_total=int(record["files"]),
        files_done=rows.file_count(conn, agent),
        running=None,
        here=record["owner"] == _this_process(),
    )


def claim(conn: Connection, agent: str, host: str, meta: IndexMeta, files_total: int) -> None:
    """Record this process as the writer of the agent's first index, and its workspace as
    `host`'s: the finished meta comes last, and a resume of an interrupted first index from
    another folder must keep this workspace, not bind the index there and drop its rows."""
    record = {"owner": _this_process(), "files": files_total, "meta": index_meta_to_json(meta)}
    meta_rows.put(conn, agent, meta_rows.FIRST_INDEX_KEY, json.dumps(record))
    if meta.workspace:
        meta_rows.put(conn, agent, meta_rows.workspace_key(host), meta.workspace)


def _this_process() -> str:
    """The writer named in a first index's record: this host and process."""
    return f"{socket.gethostname()}-{os.getpid()}"
