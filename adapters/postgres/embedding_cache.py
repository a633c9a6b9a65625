"""Adapter plumbing: the embedding cache rows of one agent (float32 little-endian bytes).

Vectors are stored as bytes rather than pgvector values: the cache is only read back whole,
never searched, and the bytes are the SQLite store's format, so `store copy` moves them as is.
Recency is a counter (`max(last_used) + 1` per put), as in the SQLite store; concurrent puts of
one agent are serialised by the agent's sync lock, and two equal counters only blur the order
of entries put at the same moment.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from sqlalchemy import Connection

from memlane.application.ports.embedding import Vector
from memlane.application.ports.index_store import CacheKey
from memlane.domain.chunks import ContentHash


def to_bytes(vector: Sequence[float]) -> bytes:
    """Encode a vector as float32 little-endian bytes."""
    return np.asarray(vector, dtype="<f4").tobytes()


def from_bytes(data: bytes) -> list[float]:
    """Decode float32 little-endian bytes."""
    values: list[float] = np.frombuffer(data, dtype="<f4").tolist()
    return values


def get(
    conn: Connection, agent: str, key: CacheKey, hashes: Sequence[ContentHash]
) -> dict[ContentHash, Vector]:
    """Return cached vectors for the hashes found (reading does not refresh recency)."""
    unique = list(dict.fromkeys(hashes))
    if not unique:
        return {}
    found: dict[ContentHash, Vector] = {}
    for h, data in conn.exec_driver_sql(
        "SELECT hash, embedding FROM memlane_embedding_cache WHERE agent = %s "
        "AND provider = %s AND model = %s AND provider_key = %s AND hash = ANY(%s)",
        (agent, key.provider, key.model, key.provider_key, unique),
    ):
        vector = from_bytes(bytes(data))
        if vector:
            found[ContentHash(str(h))] = vector
    return found


def put(conn: Connection, agent: str, key: CacheKey, vectors: Mapping[ContentHash, Vector]) -> None:
    """Store vectors; they become the agent's most recently used entries."""
    clock = conn.exec_driver_sql(
        "SELECT coalesce(max(last_used), 0) + 1 FROM memlane_embedding_cache WHERE agent = %s",
        (agent,),
    ).scalar_one()
    hashes = list(vectors)
    conn.exec_driver_sql(
        "INSERT INTO memlane_embedding_cache(agent, provider, model, provider_key, hash, "
        "embedding, dims, last_used) "
        "SELECT %s, %s, %s, %s, h, e, d, %s FROM unnest(%s::text[], %s::bytea[], %s::int[]) "
        "AS u(h, e, d) "
        "ON CONFLICT (agent, provider, model, provider_key, hash) DO UPDATE SET "
        "embedding = excluded.embedding, dims = excluded.dims, last_used = excluded.last_used",
        (
            agent,
            key.provider,
            key.model,
            key.provider_key,
            int(clock),
            hashes,
            [to_bytes(vectors[h]) for h in hashes],
            [len(vectors[h]) for h in hashes],
        ),
    )


def prune(conn: Connection, agent: str, max_entries: int) -> int:
    """Delete the agent's least recently put entries beyond `max_entries`; return how many."""
    excess = size(conn, agent) - max(0, max_entries)
    if excess <= 0:
        return 0
    result = conn.exec_driver_sql(
        "DELETE FROM memlane_embedding_cache c USING ("
        "SELECT provider, model, provider_key, hash FROM memlane_embedding_cache "
        "WHERE agent = %s ORDER BY last_used, hash LIMIT %s) old "
        "WHERE c.agent = %s AND c.provider = old.provider AND c.model = old.model "
        "AND c.provider_key = old.provider_key AND c.hash = old.hash",
        (agent, excess, agent),
    )
    return int(result.rowcount)


def size(conn: Connection, agent: str) -> int:
    """Return the number of the agent's cached vectors."""
    return int(
        conn.exec_driver_sql(
            "SELECT count(*) FROM memlane_embedding_cache WHERE agent = %s", (agent,)
        ).scalar_one()
    )
