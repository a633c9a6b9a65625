"""Adapter plumbing: where the vector code file of a SQLite index lives, from how many vectors
one is built, and what `status` says while there is none.

Kept apart from the file's reader (vector_codes.py) and its engine (vector_code_index.py), which
load numpy: `memlane status` on an index without a code file (every index under `MIN_ROWS`
vectors) needs only this, and numpy was ~0.1 s of its start.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Connection

SUFFIX = ".vcodes"
# Below this many vectors no file is built: the exact engine (the delta matrix) holds them all.
MIN_ROWS = 20_000


def code_path(db_path: Path) -> Path:
    """Where the code file of the database at `db_path` lives."""
    return db_path.with_name(db_path.name + SUFFIX)


def state_without_a_file(conn: Connection, min_rows: int) -> str:
    """What the engine does with an index that has no usable code file, for `status`."""
    vectors = int(
        conn.exec_driver_sql("SELECT count(*) FROM chunks WHERE embedding IS NOT NULL").scalar_one()
    )
    if vectors < min_rows:
        return f"exact: {vectors} vectors, below {min_rows}"
    return f"none: {vectors} vectors, built by the next search"
