"""Adapter plumbing: the embedding cache table (vectors by model config and content hash).

Recency is a counter, not a clock: each put takes `max(last_used) + 1`, so pruning by
`last_used` removes the least recently put entries whatever the wall clock did.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy import Connection

from memlane.adapters.store.in_lists import batches, placeholders
from memlane.adapters.store.vector_codec import from_blob, to_blob
from memlane.application.ports.embedding import Vector
from memlane.application.ports.index_store import CacheKey
from memlane.domain.chunks import ContentHash


def get(
    conn: Connection, key: CacheKey, hashes: Sequence[ContentHash]
) -> dict[ContentHash, Vector]:
    """Return cached vectors for the hashes found (reading does not refresh recency)."""
    found: dict[ContentHash, Vector] = {}
    unique = list(dict.fromkeys(hashes))
    for batch in batches(unique):
        for h, blob in conn.exec_driver_sql(
            "SELECT hash, embedding FROM embedding_cache WHERE provider = ? AND model = ? "
            f"AND provider_key = ? AND hash IN ({placeholders(len(batch))})",
            (key.provider, key.model, key.provider_key, *batch),
        ):
            vector = from_blob(blob)
            if vector:
                found[ContentHash(str(h))] = vector
    return found


def put(conn: Connection, key: CacheKey, vectors: Mapping[ContentHash, Vector]) -> None:
    """Store vectors; they become the most recently used entries."""
    clock = conn.exec_driver_sql(
        "SELECT coalesce(max(last_used), 0) + 1 FROM embedding_cache"
    ).scalar_one()
    conn.exec_driver_sql(
        "INSERT INTO embedding_cache(provider, model, provider_key, hash, embedding, "
        "dims, last_used) VALUES (?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(provider, model, provider_key, hash) DO UPDATE SET "
        "embedding = excluded.embedding, dims = excluded.dims, "
        "last_used = excluded.last_used",
        [
            (key.provider, key.model, key.provider_key, h, to_blob(v), len(v), clock)
            for h, v in vectors.items()
        ],
    )


def prune(conn: Connection, max_entries: int) -> int:
    """Delete the least recently put entries beyond `max_entries`; return how many."""
    total = size(conn)
    excess = total - max(0, max_entries)
    if excess <= 0:
        return 0
    conn.exec_driver_sql(
        "DELETE FROM embedding_cache WHERE rowid IN (SELECT rowid FROM embedding_cache "
        "ORDER BY last_used, rowid LIMIT ?)",
        (excess,),
    )
    return excess


def size(conn: Connection) -> int:
    """Return the number of cached vectors."""
    return int(conn.exec_driver_sql("SELECT count(*) FROM embedding_cache").scalar_one())
