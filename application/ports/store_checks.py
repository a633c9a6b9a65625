"""Port helpers: the checks every IndexStore applies to what it is given (file rows, vectors,
query dimensions), so the stores refuse bad input alike.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from memlane.application.ports.embedding import Vector
from memlane.application.ports.index_records import DimensionMismatch, IndexedFile, StoreError
from memlane.domain.chunks import Chunk, ChunkId
from memlane.domain.sources import Source


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
