"""Adapter: IndexStore for one agent in a shared PostgreSQL database (pgvector + BM25 postings).

The class is a composition; the SQL lives in the modules it calls: `chunk_writes` (the work of
a file's or vectors' write), `rows` (files, chunks, postings), `vectors` (the agent's dimension),
`embedding_cache` and `meta`. Every statement filters by the agent id, which leads every primary
key. What a search reads (both legs, the pieces, the background sample) is the base class's,
`search_reads.PostgresSearchReads`.

Quirk absorbed here: text analysis runs before the write transaction, so a transaction never
waits on Python work (but once after an upgrade that changed the analysis: keyword_analysis.py
makes the agent's postings again first).
"""

from __future__ import annotations

import itertools
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import asdict

from sqlalchemy import Connection

from memlane.adapters import progress_notes
from memlane.adapters.piece_walk import PieceBacklog
from memlane.adapters.postgres import (
    chunk_pieces,
    chunk_writes,
    embedding_cache,
    first_index,
    keyword_search,
    maintenance,
    rows,
    vector_counts,
)
from memlane.adapters.postgres import meta as meta_rows
from memlane.adapters.postgres import vectors as vector_leg
from memlane.adapters.postgres.analysis import Fts5Analyser
from memlane.adapters.postgres.database import PostgresDatabase
from memlane.adapters.postgres.piece_backlog import PostgresBacklog
from memlane.adapters.postgres.rebuild import PostgresIndexRebuild
from memlane.adapters.postgres.search_reads import PostgresSearchReads
from memlane.application.ports.embedding import Vector
from memlane.application.ports.index_store import (
    CacheKey,
    FirstIndexState,
    IndexedFile,
    IndexRebuild,
    RecordedIssue,
    SourceCount,
    StoreError,
    SyncRecord,
    VectorIndexState,
    VectorProgress,
    check_file_rows,
    check_vector,
    check_vector_batch,
)
from memlane.domain.chunks import Chunk, ChunkId, ContentHash
from memlane.domain.index_meta import IndexMeta
from memlane.domain.sources import Source


class PostgresIndexStore(PostgresSearchReads):
    """The live index of one agent in a `PostgresDatabase` (its searches: search_reads.py)."""

    def __init__(
        self,
        db: PostgresDatabase,
        agent: str,
        *,
        cache_agent: str | None = None,
        analyser: Fts5Analyser | None = None,
        keyword_pruning: bool = True,
        host: str | None = None,
    ) -> None:
        """Serve `agent`'s rows; `cache_agent` names whose embedding cache to use (a rebuild
        writes under a temporary id but shares the live agent's cache). `keyword_pruning=False`
        ranks every matching row in the keyword leg (the same answer, slower: the reference the
        tests and the store bench compare the pruned path with). `host` names whose workspace
        record `meta` reads and `set_meta` writes (meta.installation(); default: this host's
        name and no state dir)."""
        if not agent:
            raise StoreError("an agent id is required")
        self._db = db
        self._agent = agent
        self._host = host or meta_rows.installation()
        self._cache_agent = cache_agent or agent
        self._owns_analyser = analyser is None
        self._analyser = analyser or Fts5Analyser()
        self._hit_cache = keyword_search.HitCache() if keyword_pruning else None
        self._analysis_checked = False
        # The rows' state and the meta notes a process leaves for the next (piece_walk.py).
        self._notes = PostgresBacklog(db, agent)
        self._piece_backlog = PieceBacklog(self._notes)
        self._progress = vector_counts.KeptProgress(agent)
        self.last_keyword_plan = ""
        self._files_written = itertools.count(1)

    @property
    def database(self) -> PostgresDatabase:
        """The database this store reads and writes."""
        return self._db

    @property
    def agent(self) -> str:
        """The agent id this store serves."""
        return self._agent

    # --- writes --------------------------------------------------------------------------------

    def replace_file(
        self,
        file: IndexedFile,
        chunks: Sequence[Chunk],
        vectors: Sequence[Vector | None],
        model: str,
    ) -> None:
        """Replace every row of one file in ONE transaction (see IndexWriter)."""
        dims = check_file_rows(file, chunks, vectors)
        self._check_analysis()
        tokens = self._analyser.document_tokens([c.indexed_text for c in chunks])
        batch = chunk_writes.wire_rows(chunks, vectors, model)
        self._db.write(
            lambda conn: chunk_writes.replace_file(
                conn, self._agent, file, batch, tokens, dims, register=self._registers
            )
        )
        if next(self._files_written) in rows.ANALYSE_AFTER_FILES:
            self._db.write(rows.analyse_tables)

    def set_meta(self, meta: IndexMeta) -> None:
        """Store the meta; a new `dimensions` drops vectors of the old one (see IndexWriter)."""

        def work(conn: Connection) -> None:
            self._register(conn)
            meta_rows.put_index_meta(conn, self._agent, self._host, meta)
            # A first index is complete when its meta is written.
            meta_rows.delete(conn, self._agent, meta_rows.FIRST_INDEX_KEY)
            if meta.dimensions is not None:
                vector_leg.change_dims(conn, self._agent, meta.dimensions)

        self._db.write(work)

    def touch_file(self, file: IndexedFile) -> None:
        """Update mtime and size of an indexed file (no-op if it is not indexed)."""
        self._db.write(lambda conn: rows.touch_file(conn, self._agent, file))

    def delete_file(self, source: Source, path: str) -> None:
        """Remove every row of one file in one transaction (no-op if it is not indexed)."""
        self._db.write(lambda conn: chunk_writes.delete_file(conn, self._agent, source, path))

    def set_vectors(self, model: str, vectors: Mapping[ChunkId, Vector]) -> None:
        """Attach vectors to existing chunks in one transaction (unknown ids are ignored)."""
        size = check_vector_batch(vectors)
        if size is None:
            return
        ids = list(vectors)
        values = [vector_leg.to_wire(vectors[i]) for i in ids]
        self._db.write(
            lambda conn: chunk_writes.set_vectors(conn, self._agent, model, size, ids, values)
        )

    def set_pieces(self, model: str, pieces: Mapping[ChunkId, Sequence[Vector]]) -> None:
        """Attach note chunks' piece vectors of `model` in one transaction (see IndexStore)."""
        for vectors in pieces.values():
            for v in vectors:
                check_vector(v)
        if pieces:
            self._db.write(lambda conn: chunk_pieces.put(conn, self._agent, model, pieces))

    def cache_put(self, key: CacheKey, vectors: Mapping[ContentHash, Vector]) -> None:
        """Store vectors in the cache; they become the most recently used entries."""
        if not vectors:
            return
        for v in vectors.values():
            check_vector(v)
        self._db.write(lambda conn: embedding_cache.put(conn, self._cache_agent, key, vectors))

    def cache_prune(self, max_entries: int) -> int:
        """Delete the least recently put entries beyond `max_entries`; return how many."""
        return self._db.write(
            lambda conn: embedding_cache.prune(conn, self._cache_agent, max_entries)
        )

    # --- reads ---------------------------------------------------------------------------------

    def issues(self) -> list[RecordedIssue]:
        """Return the recorded per-file problems, sorted by key then path."""
        with self._db.read() as conn:
            value = meta_rows.get(conn, self._agent, meta_rows.ISSUES_KEY)
        found = [RecordedIssue(**item) for item in json.loads(value or "[]")]
        return sorted(found, key=lambda i: (i.key, i.path))

    def replace_issues(self, issues: Sequence[RecordedIssue]) -> None:
        """Replace every recorded problem with `issues`, in one transaction."""
        value = json.dumps([asdict(i) for i in issues])
        self._db.write(lambda conn: meta_rows.put(conn, self._agent, meta_rows.ISSUES_KEY, value))

    def last_sync(self) -> SyncRecord | None:
        """Return the last recorded sync, None when none was recorded."""
        with self._db.read() as conn:
            value = meta_rows.get(conn, self._agent, meta_rows.LAST_SYNC_KEY)
        return None if value is None else SyncRecord(**json.loads(value))

    def record_sync(self, record: SyncRecord) -> None:
        """Record the last sync that changed the index; refresh statistics after a big one."""
        value = json.dumps(asdict(record))
        self._db.write(
            lambda conn: meta_rows.put(conn, self._agent, meta_rows.LAST_SYNC_KEY, value)
        )
        maintenance.refresh_after_bulk_write(self._db)

    def meta(self) -> IndexMeta | None:
        """Return the stored meta (its workspace: the one this host recorded, "" when none), or
        None for an index never written."""
        with self._db.read() as conn:
            return meta_rows.index_meta(conn, self._agent, self._host)

    def file(self, source: Source, path: str) -> IndexedFile | None:
        """Return the files row of one file, or None if it is not indexed."""
        with self._db.read() as conn:
            return rows.file(conn, self._agent, source, path)

    def files(self, source: Source | None = None) -> list[IndexedFile]:
        """Return the indexed files (of one source, or all), sorted by source then path."""
        with self._db.read() as conn:
            return rows.files(conn, self._agent, source)

    def counts(self) -> list[SourceCount]:
        """Return files and chunks per source present in the index."""
        with self._db.read() as conn:
            return rows.counts(conn, self._agent)

    def chunks_without_vectors(self, model: str, limit: int = 1000) -> list[Chunk]:
        """Return chunks whose vector is missing or was made by another model."""
        with self._db.read() as conn:
            return rows.chunks_without_vectors(conn, self._agent, model, limit)

    def chunks_without_pieces(self, model: str, limit: int = 1000) -> list[Chunk]:
        """Note chunks with a vector of `model` and no piece vectors of it (see IndexStore;
        the walk and its "none" kept across processes: adapters/piece_walk.py)."""
        return self._piece_backlog.next(model, limit)

    def pieces_owed(self, model: str, at_most: int) -> int:
        """Note chunks lacking pieces of `model`, counted up to `at_most` (see IndexStore)."""
        return self._piece_backlog.owed(model, at_most)

    def vector_progress(self, model: str) -> VectorProgress:
        """Count the chunks with a vector of `model`, and all chunks (see IndexStore); counted
        again only when the agent's rows changed since, by this process or one before it
        (vector_counts.py)."""
        with self._db.read() as conn:
            progress, counted = self._progress.get(conn, model)
        if counted is not None:
            progress_notes.record(self._notes.record, model, counted, progress)
        return progress

    def first_index(self) -> FirstIndexState | None:
        """The first index being written into the agent's rows (see IndexStore and
        adapters/postgres/first_index.py)."""
        with self._db.read() as conn:
            return first_index.state(conn, self._agent)

    def rebuild_elsewhere(self) -> bool:
        """Always False (see IndexStore): a rebuild holds the agent's SyncLock, which a sync
        here waits for, and then finds the work done."""
        return False

    def claim_first_index(self, meta: IndexMeta, files_total: int) -> bool:
        """Record this process as the first index's writer (see IndexStore); always granted:
        the caller holds the agent's SyncLock."""

        def work(conn: Connection) -> None:
            self._register(conn)
            first_index.claim(conn, self._agent, self._host, meta, files_total)

        self._db.write(work)
        return True

    def cache_get(self, key: CacheKey, hashes: Sequence[ContentHash]) -> dict[ContentHash, Vector]:
        """Return cached vectors for the hashes found (reading does not refresh recency)."""
        with self._db.read() as conn:
            return embedding_cache.get(conn, self._cache_agent, key, hashes)

    def cache_size(self) -> int:
        """Return the number of cached vectors."""
        with self._db.read() as conn:
            return embedding_cache.size(conn, self._cache_agent)

    # --- lifecycle -----------------------------------------------------------------------------

    def begin_rebuild(self) -> IndexRebuild:
        """Start a full reindex under a temporary agent id; commit moves it into place."""
        shadow = f"{self._agent}#rebuild-{uuid.uuid4().hex}"
        writer = PostgresIndexStore(
            self._db,
            shadow,
            cache_agent=self._cache_agent,
            analyser=self._analyser,
            host=self._host,
        )
        return PostgresIndexRebuild(self._db, live=self._agent, shadow=shadow, writer=writer)

    def vector_status(self) -> tuple[bool, str | None]:
        """Return (pgvector available, None): the schema cannot exist without it."""
        return True, None

    def vector_index_state(self) -> VectorIndexState:
        """pgvector's HNSW index lives in the database: nothing to build or go stale here."""
        return VectorIndexState("pgvector", None, "hnsw index in PostgreSQL")

    def location(self) -> str:
        """Return the database URL (password masked) and the agent."""
        return f"{self._db.location}#agent={self._agent}"

    def vanished(self) -> str | None:
        """See IndexStore: a database server keeps its data; a lost connection is an error."""
        return None

    def close(self) -> None:
        """Release connections; idempotent."""
        self._db.close()
        if self._owns_analyser:
            self._analyser.close()

    @property
    def _registers(self) -> bool:
        # The live agent is listed in memlane_agents, not the temporary id a rebuild writes under.
        return self._agent == self._cache_agent

    def _register(self, conn: Connection) -> None:
        if self._registers:
            meta_rows.register_agent(conn, self._agent)
