"""Adapter: IndexTransfer for one agent in the shared PostgreSQL database (`store copy`).

Reads stream in the order the port promises; `load` writes the whole agent in one
transaction, analysing chunk texts for the keyword postings on the way (the vectors are taken
as they are). The event counter (`memlane_agents.last_event`) is set to the source's high-water
mark, so positions stay as they were and are never reused.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import groupby
from typing import Final

from sqlalchemy import Connection

from memlane.adapters.index_rows import chunk_from_row
from memlane.adapters.postgres import (
    embedding_cache,
    keyword_analysis,
    maintenance,
    meta,
    rows,
    vectors,
)
from memlane.adapters.postgres.analysis import Fts5Analyser
from memlane.adapters.postgres.database import PostgresDatabase
from memlane.application.ports.index_store import CacheKey
from memlane.application.ports.index_transfer import (
    CacheRecord,
    ChunkRecord,
    IndexSnapshot,
    StoredEvent,
    TransferCounts,
    TransferTargetNotEmpty,
)
from memlane.domain.chunks import ContentHash
from memlane.domain.index_meta import KEYWORD_ONLY_MODEL

_BATCH = 500
# Every table holding an agent's rows, the registration last (what `remove` deletes);
# tests/integration/postgres/test_pg_store_copy_undo.py checks it against the schema.
AGENT_TABLES: Final = (
    "memlane_postings",
    "memlane_chunk_pieces",
    "memlane_chunks",
    "memlane_files",
    "memlane_embedding_cache",
    "memlane_events",
    "memlane_tracking",
    "memlane_keyword_stats",
    "memlane_meta",
    "memlane_agents",
)


def agents(db: PostgresDatabase) -> list[str]:
    """Return the agents the database holds (rebuilds in progress are not agents)."""
    with db.read() as conn:
        return [
            str(r[0])
            for r in conn.exec_driver_sql("SELECT agent FROM memlane_agents ORDER BY agent")
        ]


class PostgresIndexTransfer:
    """Bulk read and write of one agent's rows."""

    def __init__(self, db: PostgresDatabase, agent: str, *, host: str = "") -> None:
        """Move `agent`'s rows in `db`; `host` names the installation whose workspace record
        the IndexMeta reads and writes (meta.installation())."""
        self._db = db
        self._agent = agent
        self._host = host or meta.installation()

    def counts(self) -> TransferCounts:
        """Return what the agent's store holds."""
        a = self._agent
        with self._db.read() as conn:

            def count(sql: str) -> int:
                return int(conn.exec_driver_sql(sql, (a,)).scalar_one())

            return TransferCounts(
                files=count("SELECT count(*) FROM memlane_files WHERE agent = %s"),
                chunks=count("SELECT count(*) FROM memlane_chunks WHERE agent = %s"),
                vectors=count(
                    "SELECT count(*) FROM memlane_chunks WHERE agent = %s AND embedding IS NOT NULL"
                ),
                cache=count("SELECT count(*) FROM memlane_embedding_cache WHERE agent = %s"),
                events=count("SELECT count(*) FROM memlane_events WHERE agent = %s"),
                last_position=count(
                    "SELECT coalesce((SELECT last_event FROM memlane_agents WHERE agent = %s), 0)"
                ),
                tracking=count("SELECT count(*) FROM memlane_tracking WHERE agent = %s"),
            )

    def snapshot(self) -> IndexSnapshot:
        """Return meta, files, events, last position and tracking."""
        a = self._agent
        with self._db.read() as conn:
            stored = meta.index_meta(conn, a, self._host)
            events = [
                StoredEvent(int(p), str(t), int(v), str(d), str(o))
                for p, t, v, d, o in conn.exec_driver_sql(
                    "SELECT position, type, version, data, occurred_at FROM memlane_events "
                    "WHERE agent = %s ORDER BY position",
                    (a,),
                )
            ]
            last = conn.exec_driver_sql(
                "SELECT coalesce((SELECT last_event FROM memlane_agents WHERE agent = %s), 0)",
                (a,),
            ).scalar_one()
            tracking = {
                str(h): int(p)
                for h, p in conn.exec_driver_sql(
                    "SELECT handler, position FROM memlane_tracking WHERE agent = %s", (a,)
                )
            }
            return IndexSnapshot(
                meta=stored,
                files=rows.files(conn, a, None),
                events=events,
                last_position=int(last),
                tracking=tracking,
            )

    def chunks(self) -> Iterator[ChunkRecord]:
        """Yield every chunk with its vector, file by file."""
        with self._db.read() as conn:
            result = conn.exec_driver_sql(
                "SELECT id, source, path, start_line, end_line, text, hash, timestamp, model, "
                "embedding, time_start, time_end, context FROM memlane_chunks WHERE agent = %s "
                'ORDER BY source COLLATE "C", path COLLATE "C", rid',
                (self._agent,),
            )
            for row in result:
                r = tuple(row)
                yield ChunkRecord(
                    chunk=chunk_from_row((*r[:8], r[10], r[11], r[12])),
                    vector=None if r[9] is None else vectors.from_wire(r[9]),
                    model=str(r[8]),
                )

    def cache(self) -> Iterator[CacheRecord]:
        """Yield every cache entry, least recently used first."""
        with self._db.read() as conn:
            for provider, model, key, h, data in conn.exec_driver_sql(
                "SELECT provider, model, provider_key, hash, embedding FROM "
                "memlane_embedding_cache WHERE agent = %s ORDER BY last_used, hash",
                (self._agent,),
            ):
                yield CacheRecord(
                    CacheKey(str(provider), str(model), str(key)),
                    ContentHash(str(h)),
                    embedding_cache.from_bytes(bytes(data)),
                )

    def load(
        self, snapshot: IndexSnapshot, chunks: Iterator[ChunkRecord], cache: Iterator[CacheRecord]
    ) -> None:
        """Write a whole index in one transaction; TransferTargetNotEmpty if one exists."""
        analyser = Fts5Analyser()
        a = self._agent

        def work(conn: Connection) -> None:
            meta.register_agent(conn, a)
            taken = conn.exec_driver_sql(
                "SELECT EXISTS (SELECT 1 FROM memlane_files WHERE agent = %s) "
                "OR EXISTS (SELECT 1 FROM memlane_events WHERE agent = %s) "
                "OR EXISTS (SELECT 1 FROM memlane_meta WHERE agent = %s)",
                (a, a, a),
            ).scalar_one()
            if taken:
                raise TransferTargetNotEmpty(
                    f"agent {a} already has an index in {self._db.location}"
                )
            if snapshot.meta is not None:
                meta.put_index_meta(conn, a, self._host, snapshot.meta)
            for file in snapshot.files:
                rows.put_file(conn, a, file)
            _load_chunks(conn, a, chunks, analyser)
            keyword_analysis.stamp(conn, a)
            _load_cache(conn, a, cache)
            _load_events(conn, a, snapshot)

        try:
            self._db.write(work)
        finally:
            analyser.close()
        maintenance.refresh_after_bulk_write(self._db)

    def remove(self) -> None:
        """Delete every row of the agent, its registration included, in one transaction."""

        def work(conn: Connection) -> None:
            for table in AGENT_TABLES:
                conn.exec_driver_sql(f"DELETE FROM {table} WHERE agent = %s", (self._agent,))

        self._db.write(work)

    def how_to_remove(self) -> str:
        """The SQL deleting the agent's rows, for psql in the target database."""
        agent = "'" + self._agent.replace("'", "''") + "'"
        statements = " ".join(f"DELETE FROM {t} WHERE agent = {agent};" for t in AGENT_TABLES)
        return f"run in {self._db.location}: BEGIN; {statements} COMMIT;"

    def close(self) -> None:
        """Release connections; idempotent."""
        self._db.close()


def _load_chunks(
    conn: Connection, agent: str, chunks: Iterator[ChunkRecord], analyser: Fts5Analyser
) -> None:
    now = rows.now(conn)
    batch: list[ChunkRecord] = []
    # A dimension without an HNSW index yet (the usual first copy into a new database) gets
    # its index built once at the end: inserting row by row into the graph is what limits the
    # insert rate (measured ~10x slower than loading then building, bench/RESULTS.md).
    deferred: set[int] = set()

    def flush() -> None:
        dims = {len(r.vector) for r in batch if r.vector is not None}
        for d in dims:
            if d not in deferred and not vectors.index_exists(conn, d):
                deferred.add(d)
            vectors.ensure_dims(conn, agent, d, build_index=d not in deferred)
        tokens = analyser.document_tokens([r.chunk.indexed_text for r in batch])
        rows.insert_chunks(
            conn,
            agent,
            [
                (
                    r.chunk,
                    None if r.vector is None else vectors.to_wire(r.vector),
                    r.model if r.vector is not None else KEYWORD_ONLY_MODEL,
                    None if r.vector is None else len(r.vector),
                )
                for r in batch
            ],
            tokens,
            now,
        )
        batch.clear()

    for record in chunks:
        batch.append(record)
        if len(batch) >= _BATCH:
            flush()
    if batch:
        flush()
    for d in sorted(deferred):
        vectors.build_deferred_index(conn, d)


def _load_cache(conn: Connection, agent: str, cache: Iterator[CacheRecord]) -> None:
    # Consecutive entries of one key go in one put; each put is one step of recency.
    for key, group in groupby(cache, key=lambda r: r.key):
        embedding_cache.put(conn, agent, key, {r.hash: r.vector for r in group})


def _load_events(conn: Connection, agent: str, snapshot: IndexSnapshot) -> None:
    events = snapshot.events
    if events:
        conn.exec_driver_sql(
            "INSERT INTO memlane_events(agent, position, type, version, data, occurred_at) "
            "SELECT %s, p, t, v, d, o FROM unnest(%s::bigint[], %s::text[], %s::int[], "
            "%s::text[], %s::text[]) AS u(p, t, v, d, o)",
            (
                agent,
                [e.position for e in events],
                [e.type for e in events],
                [e.version for e in events],
                [e.data for e in events],
                [e.occurred_at for e in events],
            ),
        )
    conn.exec_driver_sql(
        "UPDATE memlane_agents SET last_event = %s WHERE agent = %s",
        (snapshot.last_position, agent),
    )
    for handler, position in snapshot.tracking.items():
        conn.exec_driver_sql(
            "INSERT INTO memlane_tracking(agent, handler, position) VALUES (%s, %s, %s)",
            (agent, handler, position),
        )
