"""Adapter: IndexStore on one SQLite file, with sqlite-vec (vec0) and FTS5.

The class is a composition; the SQL lives in the modules it calls:

* `rows` — files, chunks and their FTS5 keyword rows, and FTS5's own keyword ranking;
* `chunk_writes` — the work inside a write of chunk rows, and what it changes of the kept counts;
* `keyword_search` — the keyword leg: FTS5's ranking, pruned to the rows that can reach the top k;
* `embedding_cache` — the vectors reused across reindexes;
* `vec0` — the sqlite-vec mirror of the chunk vectors and the vector dimension;
* `vector_search` — the vector leg's engine (by default a memory-mapped code file beside the
  database with exact float32 re-scoring; "numpy" is the exact in-process matrix, "vec0"
  sqlite-vec's KNN);
* `meta_table` — the stored IndexMeta and the store's bookkeeping keys.

Quirks of the external pieces absorbed here: FTS5 rejects malformed MATCH expressions with an
OperationalError, which the port turns into [] (and nothing else is swallowed); vec0 tables can
only be touched by a connection that loaded the extension (see vec0.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection

from memlane.adapters import progress_notes
from memlane.adapters.piece_walk import PieceBacklog
from memlane.adapters.sample_cosines import sample_cosines
from memlane.adapters.store import (
    chunk_pieces,
    chunk_writes,
    embedding_cache,
    first_index,
    keyword_window,
    meta_table,
    rows,
    sync_state,
)
from memlane.adapters.store import vector_progress as progress_counts
from memlane.adapters.store.background_sample import sample_blobs
from memlane.adapters.store.database import SqliteDatabase
from memlane.adapters.store.keyword_search import KeywordSearch
from memlane.adapters.store.lazy_vector_engine import LazyVectorEngine
from memlane.adapters.store.piece_backlog import SqliteBacklog
from memlane.adapters.store.rebuild import SqliteIndexRebuild
from memlane.adapters.store.temp_files import rebuilding_elsewhere, temp_path_for
from memlane.adapters.store.vec0 import Vec0Table
from memlane.adapters.store.vector_codec import from_blob
from memlane.application.ports.embedding import Vector
from memlane.application.ports.index_store import (
    CacheKey,
    FirstIndexState,
    IndexedFile,
    IndexRebuild,
    RecordedIssue,
    SourceCount,
    SyncRecord,
    VectorIndexState,
    VectorProgress,
    check_file_rows,
    check_query_dims,
    check_vector,
    check_vector_batch,
    vector_search_wanted,
)
from memlane.application.reports import RecoveryStats
from memlane.domain.chunks import Chunk, ChunkId, ContentHash
from memlane.domain.index_meta import (
    IndexMeta,
    index_meta_from_json,
    index_meta_to_json,
)
from memlane.domain.search import Candidate, TimeWindow
from memlane.domain.sources import ALL_SOURCES, Source

if TYPE_CHECKING:
    from memlane.adapters.store.vector_search import VectorSearch


class SqliteIndexStore:
    """The live index in a `SqliteDatabase` (see the module docstring for the quirks)."""

    def __init__(self, db: SqliteDatabase, *, vector_search: VectorSearch = "codes") -> None:
        """Serve the index in `db`; `vector_search` picks the vector leg's engine."""
        self._db = db
        self._vector_search = vector_search
        self._vec0 = Vec0Table(db)
        self._vectors = LazyVectorEngine(vector_search, self._vec0, db.path)
        self._keywords = KeywordSearch()
        self._progress = progress_counts.ProgressCounts()
        # The rows' state and the meta notes a process leaves for the next (piece_walk.py).
        self._notes = SqliteBacklog(db)
        self._piece_backlog = PieceBacklog(self._notes)

    @classmethod
    def open(cls, path: str | Path, *, vector_search: VectorSearch = "codes") -> SqliteIndexStore:
        """Open the database at `path` and serve it (convenience for scripts and tests)."""
        return cls(SqliteDatabase.open(path), vector_search=vector_search)

    @property
    def database(self) -> SqliteDatabase:
        """The database this store reads and writes."""
        return self._db

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

        def work(conn: Connection) -> progress_counts.Change | None:
            return chunk_writes.replace_file(
                conn, self._vec0, self._progress, file, chunks, vectors, model, dims
            )

        self._progress.committed(self._db.write(work))

    def set_meta(self, meta: IndexMeta) -> None:
        """Store the meta; a new `dimensions` rebuilds the vector table (see IndexWriter)."""

        def work(conn: Connection) -> None:
            meta_table.put(conn, meta_table.INDEX_META_KEY, index_meta_to_json(meta))
            first_index.finish(conn)  # a first index is complete when its meta is written
            if meta.dimensions is not None:
                self._vec0.change_dims(conn, meta.dimensions)

        self._db.write(work)

    def touch_file(self, file: IndexedFile) -> None:
        """Update mtime and size of an indexed file (no-op if it is not indexed)."""
        self._db.write(lambda conn: rows.touch_file(conn, file))

    def delete_file(self, source: Source, path: str) -> None:
        """Remove every row of one file in one transaction (no-op if it is not indexed)."""

        def work(conn: Connection) -> progress_counts.Change | None:
            return chunk_writes.delete_file(conn, self._vec0, self._progress, source, path)

        self._progress.committed(self._db.write(work))

    def set_vectors(self, model: str, vectors: Mapping[ChunkId, Vector]) -> None:
        """Attach vectors to existing chunks in one transaction (see chunk_writes.set_vectors)."""
        size = check_vector_batch(vectors)
        if size is None:
            return

        def work(conn: Connection) -> progress_counts.Change | None:
            return chunk_writes.set_vectors(conn, self._vec0, self._progress, model, vectors, size)

        self._progress.committed(self._db.write(work))

    def set_pieces(self, model: str, pieces: Mapping[ChunkId, Sequence[Vector]]) -> None:
        """Attach note chunks' piece vectors of `model` in one transaction (see IndexStore)."""
        for vectors in pieces.values():
            for v in vectors:
                check_vector(v)
        if pieces:
            self._db.write(lambda conn: chunk_pieces.put(conn, model, pieces))

    def cache_put(self, key: CacheKey, vectors: Mapping[ContentHash, Vector]) -> None:
        """Store vectors in the cache; they become the most recently used entries."""
        if not vectors:
            return
        for v in vectors.values():
            check_vector(v)
        self._db.write(lambda conn: embedding_cache.put(conn, key, vectors))

    def cache_prune(self, max_entries: int) -> int:
        """Delete the least recently put entries beyond `max_entries`; return how many."""
        return self._db.write(lambda conn: embedding_cache.prune(conn, max_entries))

    # --- reads ---------------------------------------------------------------------------------

    def meta(self) -> IndexMeta | None:
        """Return the stored meta, or None for an index never written."""
        with self._db.read() as conn:
            value = meta_table.get(conn, meta_table.INDEX_META_KEY)
        return None if value is None else index_meta_from_json(value)

    def file(self, source: Source, path: str) -> IndexedFile | None:
        """Return the `files` row of one file, or None if it is not indexed."""
        with self._db.read() as conn:
            return rows.file(conn, source, path)

    def files(self, source: Source | None = None) -> list[IndexedFile]:
        """Return the indexed files (of one source, or all), sorted by source then path."""
        with self._db.read() as conn:
            return rows.files(conn, source)

    def counts(self) -> list[SourceCount]:
        """Return files and chunks per source present in the index."""
        with self._db.read() as conn:
            return rows.counts(conn)

    def chunks_without_vectors(self, model: str, limit: int = 1000) -> list[Chunk]:
        """Return chunks whose vector is missing or was made by another model."""
        with self._db.read() as conn:
            return rows.chunks_without_vectors(conn, model, limit)

    def chunks_without_pieces(self, model: str, limit: int = 1000) -> list[Chunk]:
        """Note chunks with a vector of `model` and no piece vectors of it (see IndexStore;
        the walk and its "none" kept across processes: adapters/piece_walk.py)."""
        return self._piece_backlog.next(model, limit)

    def pieces_owed(self, model: str, at_most: int) -> int:
        """Note chunks lacking pieces of `model`, counted up to `at_most` (see IndexStore)."""
        return self._piece_backlog.owed(model, at_most)

    def piece_cosines(
        self, vector: Vector, *, model: str, ids: Sequence[ChunkId]
    ) -> dict[ChunkId, tuple[float, float | None]]:
        """Each chunk's cosine with `vector` and its best piece's (see IndexStore)."""
        with self._db.read() as conn:
            return chunk_pieces.cosines(conn, vector, model, ids)

    def vector_progress(self, model: str) -> VectorProgress:
        """Count the chunks with a vector of `model`, and all chunks (see IndexStore); counted
        again only when the chunk rows changed since, by this process or one before it
        (`vector_progress.ProgressCounts`)."""
        with self._db.read() as conn:
            progress, counted = self._progress.get(conn, model)
        if counted is not None:
            progress_notes.record(self._notes.record, model, counted, progress)
        return progress

    def first_index(self) -> FirstIndexState | None:
        """The first index being written into this database (see IndexStore)."""
        with self._db.read() as conn:
            return first_index.state(conn)

    def rebuild_elsewhere(self) -> bool:
        """A live process of this host fills a temporary database of this index (see IndexStore;
        adapters/store/temp_files.py)."""
        return rebuilding_elsewhere(self._db.path)

    def claim_first_index(self, meta: IndexMeta, files_total: int) -> bool:
        """Record this process as the writer of the first index (see IndexStore)."""
        return self._db.write(lambda conn: first_index.claim(conn, meta, files_total))

    def search_vector(
        self,
        vector: Vector,
        *,
        model: str,
        sources: Sequence[Source],
        limit: int,
        window: TimeWindow | None = None,
    ) -> list[Candidate]:
        """Return the `limit` chunks nearest to `vector` by cosine (see IndexStore)."""
        if not vector_search_wanted(vector, sources, limit):
            return []
        with self._db.read() as conn:
            dims = meta_table.vector_dims(conn)
            if dims is None:
                return []
            check_query_dims(vector, dims)
            scored = self._vectors.top(
                conn, vector, dims=dims, model=model, sources=sources, limit=limit, window=window
            )
            return rows.candidates(conn, scored)

    def background_cosines(self, vector: Vector, *, model: str, limit: int) -> list[float]:
        """Cosines with the first `limit` vectors by chunk id (see IndexStore)."""
        check_vector(vector)
        if limit <= 0 or not vector:
            return []
        with self._db.read() as conn:
            blobs = sample_blobs(conn, model, limit)
        return sample_cosines(vector, [from_blob(b) for b in blobs])

    def search_keyword(
        self,
        match: str,
        *,
        sources: Sequence[Source],
        limit: int,
        window: TimeWindow | None = None,
    ) -> list[Candidate]:
        """Return the `limit` best bm25 matches of an FTS5 MATCH expression (see IndexStore)."""
        if limit <= 0 or not sources or not match.strip():
            return []
        every_source = set(ALL_SOURCES) <= set(sources)
        with self._db.read() as conn:
            if window is not None:  # exact; the plan by the window's width (keyword_window.py)
                scored = keyword_window.window_top(
                    conn,
                    self._keywords,
                    match,
                    sources,
                    every_source=every_source,
                    limit=limit,
                    window=window,
                )
            else:
                scored = self._keywords.top(
                    conn, match, sources, every_source=every_source, limit=limit
                )
            return rows.candidates(conn, scored)

    def keyword_document_counts(self, terms: Sequence[str]) -> tuple[int, list[int]]:
        """Rows of the keyword table and rows holding each term (see IndexStore)."""
        with self._db.read() as conn:
            return self._keywords.document_counts(conn, terms)

    def cache_get(self, key: CacheKey, hashes: Sequence[ContentHash]) -> dict[ContentHash, Vector]:
        """Return cached vectors for the hashes found (reading does not refresh recency)."""
        with self._db.read() as conn:
            return embedding_cache.get(conn, key, hashes)

    def cache_size(self) -> int:
        """Return the number of cached vectors."""
        with self._db.read() as conn:
            return embedding_cache.size(conn)

    # --- what syncs leave for later processes (sync_state.py) -----------------------------------

    def issues(self) -> list[RecordedIssue]:
        """Return the recorded per-file problems, sorted by key then path."""
        with self._db.read() as conn:
            return sync_state.issues(conn)

    def replace_issues(self, issues: Sequence[RecordedIssue]) -> None:
        """Replace every recorded problem with `issues`, in one transaction."""
        self._db.write(lambda conn: sync_state.replace_issues(conn, issues))

    def last_sync(self) -> SyncRecord | None:
        """Return the last recorded sync, None when none was recorded."""
        with self._db.read() as conn:
            return sync_state.last_sync(conn)

    def record_sync(self, record: SyncRecord) -> None:
        """Record the last sync that changed the index."""
        self._db.write(lambda conn: sync_state.record_sync(conn, record))

    # --- lifecycle -----------------------------------------------------------------------------

    def begin_rebuild(self) -> IndexRebuild:
        """Start a full reindex into a temporary database (`temp_files.temp_path_for`) with the
        embedding cache copied over."""
        return SqliteIndexRebuild.start(
            self._db,
            temp_path_for(self._db.path),
            open_writer=lambda temp: SqliteIndexStore(temp, vector_search=self._vector_search),
            on_swap=self.invalidate_caches,
        )

    def vector_status(self) -> tuple[bool, str | None]:
        """Return (sqlite-vec loaded, load error or None)."""
        return self._db.vector_status()

    def recovery_stats(self) -> RecoveryStats:
        """Return how often a read-only failure was recovered by reopening the database."""
        return self._db.recovery_stats()

    def vector_index_state(self) -> VectorIndexState:
        """Return the vector engine and, for the code file, its state (see IndexStore)."""
        with self._db.read() as conn:
            return self._vectors.state(conn)

    def location(self) -> str:
        """Return the database file path (for a stand-in, the file it stands for)."""
        return str(self._db.label)

    def vanished(self) -> str | None:
        """See IndexStore: the file's absence, checked with one stat."""
        return self._db.vanished()

    def invalidate_caches(self) -> None:
        """Forget in-process caches (after the file was swapped under this store)."""
        self._vectors.invalidate()
        self._progress.forget()

    def close(self) -> None:
        """Release connections; idempotent."""
        self._db.close()
