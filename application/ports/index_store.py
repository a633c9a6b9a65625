"""Port: the search index (chunks, vectors, keyword rows, file table, meta, embedding cache).

Error tree:

    StoreError
    ├── DimensionMismatch   a query or vector has another dimension than the index's vectors
    ├── StoreReadOnly       the database cannot be written (recovered by reopening once)
    └── StoreCorrupt        the database file is not a usable index (the file is left in place)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from memlane.application.ports.embedding import Vector
from memlane.domain.chunks import Chunk, ChunkId, ContentHash
from memlane.domain.index_meta import IndexMeta
from memlane.domain.search import Candidate, TimeWindow
from memlane.domain.sources import Source


class StoreError(Exception):
    """Base for every failure an IndexStore may raise."""


class DimensionMismatch(StoreError):
    """A vector's length differs from the index's; nothing was changed."""


class StoreReadOnly(StoreError):
    """The store cannot be written."""


class StoreCorrupt(StoreError):
    """The database is damaged or not a memlane index."""


def caused_by(exc: BaseException, kind: type[StoreError]) -> bool:
    """Whether `exc`, or an error it was raised from, is a `kind` (the event log, which lives in
    the same file, wraps store errors in its own)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, kind):
            return True
        seen = seen.__cause__
    return False


@dataclass(frozen=True, slots=True)
class IndexedFile:
    """The `files` row of one indexed file (primary key: source + path)."""

    source: Source
    path: str
    hash: ContentHash
    mtime: float
    size: int


@dataclass(frozen=True, slots=True)
class SourceCount:
    """How many files and chunks one source has in the index."""

    source: Source
    files: int
    chunks: int


@dataclass(frozen=True, slots=True)
class VectorProgress:
    """How many chunks have a vector of one model, of all the chunks in the index."""

    done: int
    total: int

    @property
    def missing(self) -> int:
        """Chunks still waiting for a vector of the model (the backfill's work)."""
        return self.total - self.done

    @property
    def complete(self) -> bool:
        """Whether every chunk has its vector (true for an empty index)."""
        return self.done >= self.total

    def ratio(self) -> str:
        """`12,345 / 100,000 (12 %)`; the percentage rounds down, so 100 % means done."""
        percent = 100 * self.done // self.total if self.total else 100
        return f"{self.done:,} / {self.total:,} ({percent} %)"

    def text(self) -> str:
        """`vectors 12,345 / 100,000 (12 %)`, the words of search warnings."""
        return f"vectors {self.ratio()}"


@dataclass(frozen=True, slots=True)
class FirstIndexState:
    """A first index being written into the live store file by file (no complete index yet).

    With no index there is nothing to protect, so the first index commits each file's rows in
    its own transaction and searches answer from the files written so far; `set_meta` at the end
    marks the index complete. `running` says whether its writer still runs (None: the store
    cannot tell, a shared server where the sync lock keeps a second sync out anyway); `here`,
    whether that writer is this process. A record whose writer is gone is an interrupted first
    index: the next sync completes it, keeping the files already written.
    """

    meta: IndexMeta  # what it builds: a resumed first index must build the same shape
    files_total: int  # files found to index when it started
    files_done: int  # files in the index so far
    running: bool | None
    here: bool

    @property
    def running_elsewhere(self) -> bool:
        """Whether another process writes it now: a sync here would do the same work twice."""
        return self.running is True and not self.here

    def text(self) -> str:
        """`indexing 5,000 / 14,285 files (35 %)`, the words of warnings and `status`."""
        done = min(self.files_done, self.files_total)
        percent = 100 * done // self.files_total if self.files_total else 100
        return f"indexing {done:,} / {self.files_total:,} files ({percent} %)"


@dataclass(frozen=True, slots=True)
class RecordedIssue:
    """A per-file problem as kept with the index, so that a new process still reports it.

    `key` is a source, or another area (`scan:<source>` for listing problems, `index`,
    `provider`). `mtime` / `size` name the version of the file the problem was found in: that
    version is not read again until it changes (None when the problem is not about one file).
    """

    key: str
    path: str
    reason: str
    mtime: float | None = None
    size: int | None = None


@dataclass(frozen=True, slots=True)
class VectorIndexState:
    """What the vector leg answers from, for `status`: the engine, how many vectors its index
    file covers (None when it has no file), and its state in words (built, stale and why,
    rebuilt and why, exact below the size that gets a file...)."""

    engine: str
    vectors: int | None
    state: str


@dataclass(frozen=True, slots=True)
class SyncRecord:
    """The last sync that changed the index, as recorded with it (`status` in a new process)."""

    finished_at: str  # ISO 8601, UTC
    reason: str
    full_reindex: bool
    files_indexed: int
    files_removed: int


@dataclass(frozen=True, slots=True)
class CacheKey:
    """Partition of the embedding cache: vectors are only reused for the same model config."""

    provider: str
    model: str
    provider_key: str


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

    def close(self) -> None:
        """Release connections; idempotent."""
        ...


def check_file_rows(
    file: IndexedFile, chunks: Sequence[Chunk], vectors: Sequence[Vector | None]
) -> int | None:
    """Check the arguments of `IndexWriter.replace_file` as every store must; return the
    vectors' dimension (None when the file has no vector).

    Raises StoreError (counts, duplicate ids, a chunk of another file, a non-finite component)
    or DimensionMismatch (vectors of several lengths).
    """
    if len(vectors) != len(chunks):
        raise StoreError(f"{len(chunks)} chunks but {len(vectors)} vectors")
    ids = [c.id for c in chunks]
    if len(set(ids)) != len(ids):
        raise StoreError(f"duplicate chunk ids in {file.source}:{file.path}")
    for chunk in chunks:
        if (chunk.source, chunk.path) != (file.source, file.path):
            raise StoreError(f"chunk {chunk.id} belongs to {chunk.source}:{chunk.path}")
    dims = {len(v) for v in vectors if v is not None}
    if len(dims) > 1:
        raise DimensionMismatch(f"vectors of one file have several lengths: {sorted(dims)}")
    for v in vectors:
        if v is not None and not all(math.isfinite(x) for x in v):
            raise StoreError("vector has NaN or infinite components; sanitise it before storing")
    return next(iter(dims)) if dims else None


# Guards every IndexStore applies the same way (the contract suite checks them on each store).


def check_vector(vector: Sequence[float]) -> None:
    """Raise StoreError for a NaN or infinite component: no store keeps one."""
    if not all(map(math.isfinite, vector)):
        raise StoreError("vector has NaN or infinite components; sanitise it before storing")


def check_vector_batch(vectors: Mapping[ChunkId, Vector]) -> int | None:
    """Check the vectors one `set_vectors` call attaches: one length, finite components; return
    that length (None: no vector, nothing to write). Raises DimensionMismatch, StoreError."""
    dims = {len(v) for v in vectors.values()}
    if len(dims) > 1:
        raise DimensionMismatch(f"vectors have several lengths: {sorted(dims)}")
    for v in vectors.values():
        check_vector(v)
    return next(iter(dims)) if dims else None


def vector_search_wanted(vector: Vector, sources: Sequence[Source], limit: int) -> bool:
    """Check a `search_vector` query; False when it can find nothing (no limit, no source, an
    empty or all-zero vector: no direction to compare). Raises StoreError (non-finite)."""
    check_vector(vector)
    if limit <= 0 or not sources or not vector:
        return False
    return math.fsum(x * x for x in vector) != 0.0


def check_query_dims(vector: Vector, dims: int) -> None:
    """Raise DimensionMismatch when a query vector's length is not the index's."""
    if len(vector) != dims:
        raise DimensionMismatch(f"query has {len(vector)} dimensions, the index has {dims}")
