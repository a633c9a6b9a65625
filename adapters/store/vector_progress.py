"""SQLite: how far the vectors of one model are (the vector backfill's progress).

A chunk without a vector is stored with the keyword-only model label, so "has a vector of
model M" is exactly `model = M`, and both counts are answered from the `idx_chunks_model`
index without reading a chunk row.
"""

from __future__ import annotations

from sqlalchemy import Connection

from memlane.application.ports.index_store import VectorProgress


def vector_progress(conn: Connection, model: str) -> VectorProgress:
    """Count the chunks with a vector of `model`, and all chunks, in the caller's snapshot."""
    # Two index range scans around `model` cost what is missing, not what is done.
    missing = conn.exec_driver_sql(
        "SELECT count(*) FROM chunks WHERE model < ? OR model > ?", (model, model)
    ).scalar_one()
    total = conn.exec_driver_sql("SELECT count(*) FROM chunks").scalar_one()
    return VectorProgress(done=int(total) - int(missing), total=int(total))
