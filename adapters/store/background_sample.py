"""Adapter plumbing: the fixed sample of vectors a query's confidence is measured against.

The sample is the first `limit` vectors of one model by chunk id (IndexStore.background_cosines).
SQLite, left alone, reads it through the model index: every row of the model, then a sort by id,
which costs ~0.3 s at 100k chunks and grows with the index, on every search. Walking the unique
index on id instead stops after `limit` matching rows, a fraction of a millisecond whenever the
model holds most rows (the usual case). When it holds few (an index being re-embedded into
another model), that walk could read the whole table: it is bounded to the first `WALK_BOUND`
rows by id, and if they hold fewer than `limit` vectors of the model, the model index answers as
before. Both give the same rows in the same order.
"""

from __future__ import annotations

from sqlalchemy import Connection

# Rows by id the fast plan may read before the model index takes over.
WALK_BOUND = 20_000

# `+model` keeps SQLite off idx_chunks_model, so the ORDER BY walks the unique index on id.
BY_ID_WALK = (
    "SELECT embedding FROM ("
    "SELECT model, embedding FROM chunks ORDER BY id LIMIT ?"
    ") WHERE +model = ? AND embedding IS NOT NULL LIMIT ?"
)
BY_MODEL_INDEX = (
    "SELECT embedding FROM chunks WHERE model = ? AND embedding IS NOT NULL ORDER BY id LIMIT ?"
)


def sample_blobs(conn: Connection, model: str, limit: int) -> list[bytes]:
    """The embeddings of the first `limit` chunks of `model` by id (fewer when it has fewer)."""
    walked = [bytes(b) for (b,) in conn.exec_driver_sql(BY_ID_WALK, (WALK_BOUND, model, limit))]
    if len(walked) >= limit:
        return walked
    return [bytes(b) for (b,) in conn.exec_driver_sql(BY_MODEL_INDEX, (model, limit))]
