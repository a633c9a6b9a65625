"""Port: the search index (chunks, vectors, keyword rows, file table, meta, embedding cache).

Error tree:

    StoreError
    ├── DimensionMismatch   a query or vector has another dimension than the index's vectors
    ├── StoreReadOnly       the database cannot be written (recovered by reopening once)
    └── StoreCorrupt        the database file is not a usable index (the file is left in place)

The values the port speaks in and its errors are in `index_records.py`, the checks of what a
store is given in `store_checks.py`; both are re-exported here, the port's one import.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from memlane.application.ports.embedding import Vector
from memlane.application.ports.index_records import (
    CacheKey,
    DimensionMismatch,
    FirstIndexState,
    IndexedFile,
    RecordedIssue,
    SourceCount,
    StoreCorrupt,
    StoreError,
    StoreReadOnly,
    SyncRecord,
    VectorIndexState,
    VectorProgress,
    caused_by,
)
from memlane.application.ports.store_checks import (
    check_file_rows,
    check_query_dims,
    check_vector,
    check_vector_batch,
    vector_search_wanted,
)
from memlane.domain.chunks import Chunk, ChunkId, ContentHash
from memlane.domain.index_meta import IndexMeta
from memlane.domain.search import Candidate, TimeWindow
from memlane.domain.sources import Source

__all__ = [
    "CacheKey",
    "DimensionMismatch",
    "FirstIndexState",
    "IndexRebuild",
    "IndexStore",
    "IndexWriter",
    "IndexedFile",
    "RecordedIssue",
    "SourceCount",
    "StoreCorrupt",
    "StoreError",
    "StoreReadOnly",
    "SyncRecord",
    "VectorIndexState",
    "VectorProgress",
    "caused_by",
    "check_file_rows",
    "check_query_dims",
    "check_vector",
    "check_vector_batch",
    "vector_search_wanted",
]


class IndexWriter(Protocol):
    """Write operations, shared by the live index and a rebuild in progress."""

    def replace_file(
        self,
        file: IndexedFile,
        chunks: Sequence[Chunk],
        vectors: Sequence[Vector | None],
        model: str,
    ) -> None:
        """Replace every row of (file.source, file.path) in ONE transaction.

        `vectors[i]` belongs to `chunks[i]` (None: no vector yet, keyword-only). `model` names
        the model of the vectors (`fts-only` when none). Raises DimensionMismatch, before
        writing anything, if a vector's length differs from the index's dimensions.
        """
        ...

    def set_meta(self, meta: IndexMeta) -> None:
        """Store the meta; the vector table takes `meta.dimensions` when first known.

        When `meta.dimensions` differs from the vector table's, the vector table is rebuilt for
        the new dimension and vectors of the old dimension are dropped (chunks and keyword rows
        stay); this happens only here, on an explicit write, never on a read path, so a mistaken
        query cannot destroy the vectors.
        """
        ...

    def cache_get(self, key: CacheKey, hashes: Sequence[ContentHash]) -> dict[ContentHash, Vector]:
        """Return cached vectors for the hashes found."""
        ...

    def cache_put(self, key: CacheKey, vectors: Mapping[ContentHash, Vector]) -> None:
        """Store vectors in the cache (and mark them recently used)."""
        ...


class IndexRebuild(IndexWriter, Protocol):
    """A full reindex being built aside; the live index is untouched until `commit`."""

    def commit(self) -> None:
        """Atomically replace the live index with this one (the event log is preserved)."""
        ...

    def abort(self) -> None:
        """Throw this rebuild away; the live index stays as it was."""
        ...


class IndexStore(IndexWriter, Protocol):
    """The live index.

    Contract:
    * every write is atomic: after a crash, each file has either all its old rows or all new
      rows, and every chunk has its keyword row (and its vector row when it has a vector);
    * `search_vector` ranks by cosine similarity (Candidate.score in [-1, 1], best first),
      only chunks whose vector was made by `model`, only the given sources; a query vector of
      the wrong dimension raises DimensionMismatch and leaves the index intact;
    * `search_keyword` takes an FTS5 MATCH expression built by `domain.keywords`, returns
      Candidate.score = the bm25 rank (more negative is better), best first; a syntactically
      invalid expression gives [] rather than an error;
    * the embedding cache maps (CacheKey, content hash) to a vector; `cache_put` refreshes the
      recency of existing entries; `cache_prune(max_entries)` removes the least recently used.
    """

    def meta(self) -> IndexMeta | None:
        """Return the stored meta, or None for an index never written."""
        ...

    def file(self, source: Source, path: str) -> IndexedFile | None:
        """Return the `files` row of one file, or None if it is not indexed."""
        ...

    def files(self, source: Source | None = None) -> list[IndexedFile]:
        """Return the indexed files (of one source, or all), sorted by source then path."""
        ...

    def touch_file(self, file: IndexedFile) -> None:
        """Update mtime/size of an indexed file whose content hash did not change."""
        ...

    def delete_file(self, source: Source, path: str) -> None:
        """Remove every row of one file (no-op if it is not indexed)."""
        ...

    def counts(self) -> list[SourceCount]:
        """Return files and chunks per source present in the index."""
        ...

    def chunks_without_vectors(self, model: str, limit: int = 1000) -> list[Chunk]:
        """Return chunks whose vector is missing or was made by another model."""
        ...

    def set_vectors(self, model: str, vectors: Mapping[ChunkId, Vector]) -> None:
        """Attach vectors made by `model` to existing chunks, in one transaction."""
        ...

    def chunks_without_pieces(self, model: str, limit: int = 1000) -> list[Chunk]:
        """Return note chunks (domain/note_pieces.py) that have a vector of `model` but no piece
        vectors of it, oldest first."""
        ...

    def pieces_owed(self, model: str, at_most: int) -> int:
        """How many note chunks `chunks_without_pieces` has to give, counted up to `at_most`
        (from the oldest, whatever the walk has returned; cheap when nothing changed since a
        walk or count found none)."""
        ...

    def set_pieces(self, model: str, pieces: Mapping[ChunkId, Sequence[Vector]]) -> None:
        """Attach the piece vectors made by `model` to existing chunks, in one transaction; a
        chunk's pieces go when the chunk goes."""
        ...

    def piece_cosines(
        self, vector: Vector, *, model: str, ids: Sequence[ChunkId]
    ) -> dict[ChunkId, tuple[float, float | None]]:
        """For each of `ids` with a vector of `model`: its cosine with `vector`, and the best
        cosine of its piece vectors (None when it has none). Ids without such a vector are left
        out."""
        ...

    def vector_progress(self, model: str) -> VectorProgress:
        """Count the chunks whose vector was made by `model`, and all chunks, in one snapshot.

        `total - done` is what `chunks_without_vectors(model)` would return without a limit;
        searches ask it every time, so a store answers it cheaply when nothing changed since it
        last counted (and when nothing is missing).
        """
        ...

    def first_index(self) -> FirstIndexState | None:
        """The first index being written into this store; None when there is none (the index is
        complete, or nothing was ever written). Cheap: searches ask it every time."""
        ...

    def rebuild_elsewhere(self) -> bool:
        """Whether another live process rebuilds this index aside now (`index --force`, a
        changed shape): it lists every file again, so a sync here would do its work twice.
        Cheap: asked before every sync."""
        ...

    def claim_first_index(self, meta: IndexMeta, files_total: int) -> bool:
        """Record, in one transaction, that this process now writes the first index (building
        `meta`, `files_total` files) straight into the live store; return False, writing
        nothing, when another process still runs one. `set_meta` ends the record."""
        ...

    def search_vector(
        self,
        vector: Vector,
        *,
        model: str,
        sources: Sequence[Source],
        limit: int,
        window: TimeWindow | None = None,
    ) -> list[Candidate]:
        """Return the `limit` chunks nearest to `vector` (see class contract).

        With `window`, only chunks whose time range overlaps it count, chosen before the top
        `limit` (a window holding `limit` chunks with vectors gives `limit` hits).
        """
        ...

    def background_cosines(self, vector: Vector, *, model: str, limit: int) -> list[float]:
        """The cosines of `vector` with a fixed sample of the index's vectors of `model`: the
        first `limit` chunks by chunk id (a hash, so an even spread over files, and the same
        chunks for every query); every chunk when there are fewer. Empty without vectors."""
        ...

    def search_keyword(
        self,
        match: str,
        *,
        sources: Sequence[Source],
        limit: int,
        window: TimeWindow | None = None,
    ) -> list[Candidate]:
        """Return the `limit` best bm25 matches of an FTS5 MATCH expression (`window`: as for
        `search_vector`, applied before the top `limit`)."""
        ...

    def keyword_document_counts(self, terms: Sequence[str]) -> tuple[int, list[int]]:
        """The rows of the keyword index, and for each term (a word, tokenized as the keyword
        leg's phrases are) the rows holding it: bm25's N and n_i, the same counts its idf
        uses. A term without tokens holds no row."""
        ...

    def cache_prune(self, max_entries: int) -> int:
        """Delete least recently used entries beyond `max_entries`; return how many."""
        ...

    def cache_size(self) -> int:
        """Return the number of cached vectors."""
        ...

    def begin_rebuild(self) -> IndexRebuild:
        """Start a full reindex into a temporary database (cache carried over)."""
        ...

    def issues(self) -> list[RecordedIssue]:
        """Return the recorded per-file problems, sorted by key then path."""
        ...

    def replace_issues(self, issues: Sequence[RecordedIssue]) -> None:
        """Replace every recorded problem with `issues`, in one transaction."""
        ...

    def last_sync(self) -> SyncRecord | None:
        """Return the last recorded sync, None when none was recorded."""
        ...

    def record_sync(self, record: SyncRecord) -> None:
        """Record the last sync that changed the index."""
        ...

    def vector_status(self) -> tuple[bool, str | None]:
        """Return (vector extension loaded, load error message or None)."""
        ...

    def vector_index_state(self) -> VectorIndexState:
        """Return the vector index's engine and state, without building anything."""
        ...

    def location(self) -> str:
        """Return where the index lives (a file path or ":memory:")."""
        ...

    def vanished(self) -> str | None:
        """Say why the index no longer lives where `location` names (its file deleted or
        replaced by no file while open), None while it does: this process still reads the
        open copy, which nothing will find again once it stops."""
        ...

    def close(self) -> None:
        """Release connections; idempotent."""
        ...
