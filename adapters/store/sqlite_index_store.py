"""Adapter: IndexStore on one SQLite file, with sqlite-vec (vec0) and FTS5.

Quirks of the external pieces this class absorbs:

* FTS5 rejects malformed MATCH expressions with an OperationalError ("fts5: syntax error near
  ..."); the port promises [] for those, so they are caught here and nothing else is.
* vec0 (sqlite-vec) tables can only be touched by a connection that loaded the extension. A
  process without it still writes chunks (with their float32 blobs) and flags the vec table as
  stale; the next process that has the extension rebuilds it at open (see migrations.reconcile).
* Vector search reads an in-process numpy matrix (vector_matrix.py) by default, because it was
  measured faster than a vec0 KNN scan; `vector_search="vec0"` selects the KNN path instead.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal, cast

import numpy as np
from sqlalchemy import Connection

from memlane.adapters.store import migrations, schema
from memlane.adapters.store.database import DRIVER_ERRORS, RecoveryStats, SqliteDatabase
from memlane.adapters.store.temp_files import temp_path_for
from memlane.adapters.store.vector_matrix import VectorMatrix, from_blob, to_blob
from memlane.application.ports.embedding import Vector
from memlane.application.ports.index_store import (
    CacheKey,
    DimensionMismatch,
    IndexedFile,
    IndexRebuild,
    SourceCount,
    StoreError,
)
from memlane.domain.chunks import Chunk, ChunkId, ContentHash
from memlane.domain.index_meta import KEYWORD_ONLY_MODEL, IndexMeta
from memlane.domain.keywords import fts_document
from memlane.domain.search import Candidate
from memlane.domain.sources import ALL_SOURCES, Source

VectorSearch = Literal["numpy", "vec0"]
INDEX_META_KEY = "index_meta"
_UPSERT_META = (
    "INSERT INTO meta(key, value) VALUES (?, ?) "
    "ON CONFLICT(key) DO UPDATE SET value = excluded.value"
)
_CANDIDATE_COLUMNS = (
    "c.rid, c.id, c.source, c.path, c.start_line, c.end_line, c.text, c.timestamp, f.mtime"
)
_FTS_QUERY_ERRORS = ("fts5", "syntax error", "no such column", "unterminated", "unknown special")
_IN_CHUNK = 500  # bound on `IN (...)` parameters per statement
# Deleted-vector rids kept for other processes' matrices; one that fell further behind reloads.
_DELETION_LOG_KEPT = 200_000


def _placeholders(count: int) -> str:
    return ",".join("?" * count)


def _batches(values: Sequence[object], size: int = _IN_CHUNK) -> Iterable[Sequence[object]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def _check_vector(vector: Sequence[float]) -> None:
    if not bool(np.isfinite(np.asarray(vector, dtype=np.float64)).all()):
        raise StoreError("vector has NaN or infinite components; sanitise it before storing")


def _meta_map(conn: Connection, keys: Sequence[str]) -> dict[str, str]:
    rows = conn.exec_driver_sql(
        f"SELECT key, value FROM meta WHERE key IN ({_placeholders(len(keys))})", tuple(keys)
    ).all()
    return {str(k): str(v) for k, v in rows}


def _meta_to_json(meta: IndexMeta) -> str:
    return json.dumps(
        {
            "schema_version": meta.schema_version,
            "chunker_version": meta.chunker_version,
            "sources": list(meta.sources),
            "scope_hash": meta.scope_hash,
            "chunk_tokens": meta.chunk_tokens,
            "chunk_overlap": meta.chunk_overlap,
            "provider": meta.provider,
            "model": meta.model,
            "provider_key": meta.provider_key,
            "dimensions": meta.dimensions,
            "session_chunk_tokens": meta.session_chunk_tokens,
            "session_chunk_overlap": meta.session_chunk_overlap,
        }
    )


def _meta_from_json(text: str) -> IndexMeta:
    data = json.loads(text)
    return IndexMeta(
        schema_version=int(data["schema_version"]),
        chunker_version=int(data["chunker_version"]),
        sources=tuple(cast(list[Source], data["sources"])),
        scope_hash=str(data["scope_hash"]),
        chunk_tokens=int(data["chunk_tokens"]),
        chunk_overlap=int(data["chunk_overlap"]),
        provider=str(data["provider"]),
        model=str(data["model"]),
        provider_key=str(data["provider_key"]),
        dimensions=None if data["dimensions"] is None else int(data["dimensions"]),
        # Absent from metas written before these fields existed: -1 forces a rebuild.
        session_chunk_tokens=int(data.get("session_chunk_tokens", -1)),
        session_chunk_overlap=int(data.get("session_chunk_overlap", -1)),
    )


class SqliteIndexStore:
    """The live index in a `SqliteDatabase` (see the module docstring for the quirks)."""

    def __init__(self, db: SqliteDatabase, *, vector_search: VectorSearch = "numpy") -> None:
        """Serve the index in `db`; `vector_search` picks the vector leg's engine."""
        self._db = db
        self._vector_search = vector_search
        self._matrix = VectorMatrix()

    @classmethod
    def open(cls, path: str | Path, *, vector_search: VectorSearch = "numpy") -> SqliteIndexStore:
        """Open the database at `path` and serve it (convenience for scripts and tests)."""
        return cls(SqliteDatabase.open(path), vector_search=vector_search)

    @property
    def database(self) -> SqliteDatabase:
        """The database this store reads and writes."""
        return self._db

    # --- writes --------------------------------------------------------------------------------

    def _vec_ready(self, conn: Connection) -> bool:
        return self._db.vector_status()[0] and schema.table_exists(conn, schema.VEC_TABLE)

    def _dims(self, conn: Connection) -> int | None:
        value = _meta_map(conn, [migrations.VECTOR_DIMS_KEY]).get(migrations.VECTOR_DIMS_KEY)
        return None if value is None else int(value)

    def _bump_generation(self, conn: Connection) -> None:
        conn.exec_driver_sql(
            "INSERT INTO meta(key, value) VALUES (?, '1') ON CONFLICT(key) "
            "DO UPDATE SET value = CAST(value AS INTEGER) + 1",
            (migrations.GENERATION_KEY,),
        )

    def _mark_vec_stale(self, conn: Connection) -> None:
        conn.exec_driver_sql(_UPSERT_META, (migrations.VEC_STALE_KEY, "1"))

    def _adopt_dims(self, conn: Connection, dims: int) -> None:
        conn.exec_driver_sql(_UPSERT_META, (migrations.VECTOR_DIMS_KEY, str(dims)))
        if self._db.vector_status()[0]:
            schema.create_vec_table(conn, dims)
        else:
            self._mark_vec_stale(conn)

    def _ensure_dims(self, conn: Connection, dims: int | None) -> None:
        """Check `dims` against the index's (adopting it if none yet); DimensionMismatch if not."""
        if dims is None:
            return
        current = self._dims(conn)
        if current is None:
            self._adopt_dims(conn, dims)
        elif current != dims:
            raise DimensionMismatch(f"vectors have {dims} dimensions, the index has {current}")

    def _next_rid(self, conn: Connection) -> int:
        row = conn.exec_driver_sql(
            "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'chunks'), 0), "
            "coalesce((SELECT max(rid) FROM chunks), 0))"
        ).one()
        return int(row[0]) + 1

    def _delete_rids(self, conn: Connection, rids: Sequence[int]) -> None:
        if not rids:
            return
        vec_ready = self._vec_ready(conn)
        if not vec_ready and schema.table_exists(conn, schema.VEC_TABLE):
            self._mark_vec_stale(conn)
        for batch in _batches(rids):
            marks = _placeholders(len(batch))
            conn.exec_driver_sql(
                f"DELETE FROM {schema.FTS_TABLE} WHERE rowid IN ({marks})", tuple(batch)
            )
            if vec_ready:
                conn.exec_driver_sql(
                    f"DELETE FROM {schema.VEC_TABLE} WHERE rowid IN ({marks})", tuple(batch)
                )
            conn.exec_driver_sql(
                "INSERT INTO vector_deletions(rid) SELECT rid FROM chunks "
                f"WHERE rid IN ({marks}) AND embedding IS NOT NULL",
                tuple(batch),
            )
            conn.exec_driver_sql(f"DELETE FROM chunks WHERE rid IN ({marks})", tuple(batch))
        conn.exec_driver_sql(
            "DELETE FROM vector_deletions WHERE seq <= (SELECT max(seq) FROM vector_deletions) - ?",
            (_DELETION_LOG_KEPT,),
        )

    def _file_rids(self, conn: Connection, source: str, path: str) -> list[int]:
        rows = conn.exec_driver_sql(
            "SELECT rid FROM chunks WHERE source = ? AND path = ?", (source, path)
        ).all()
        return [int(r[0]) for r in rows]

    def _insert_chunks(
        self,
        conn: Connection,
        rows: Sequence[tuple[Chunk, Vector | None, str]],
        updated_at: float,
    ) -> None:
        """Insert chunks with fresh rids plus their FTS rows and (when ready) vec rows."""
        if not rows:
            return
        first = self._next_rid(conn)
        chunk_rows = []
        fts_rows = []
        vec_rows = []
        for offset, (chunk, vector, model) in enumerate(rows):
            rid = first + offset
            blob = None if vector is None else to_blob(vector)
            chunk_rows.append(
                (
                    rid,
                    chunk.id,
                    chunk.source,
                    chunk.path,
                    chunk.start_line,
                    chunk.end_line,
                    chunk.hash,
                    chunk.text,
                    model if blob is not None else KEYWORD_ONLY_MODEL,
                    blob,
                    chunk.timestamp,
                    updated_at,
                )
            )
            fts_rows.append((rid, fts_document(chunk.text)))
            if blob is not None:
                vec_rows.append((rid, blob))
        conn.exec_driver_sql(
            "INSERT INTO chunks(rid, id, source, path, start_line, end_line, hash, text, model, "
            "embedding, timestamp, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            chunk_rows,
        )
        conn.exec_driver_sql(
            f"INSERT INTO {schema.FTS_TABLE}(rowid, terms) VALUES (?, ?)", fts_rows
        )
        if vec_rows:
            if self._vec_ready(conn):
                conn.exec_driver_sql(
                    f"INSERT INTO {schema.VEC_TABLE}(rowid, embedding) VALUES (?, ?)", vec_rows
                )
            else:
                self._mark_vec_stale(conn)

    def _now(self, conn: Connection) -> float:
        # The database's clock, not Python's: adapters get no clock of their own here.
        return float(conn.exec_driver_sql("SELECT unixepoch('subsec')").scalar_one())

    def replace_file(
        self,
        file: IndexedFile,
        chunks: Sequence[Chunk],
        vectors: Sequence[Vector | None],
        model: str,
    ) -> None:
        """Replace every row of one file in ONE transaction (see IndexWriter)."""
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
            if v is not None:
                _check_vector(v)

        def work(conn: Connection) -> None:
            self._ensure_dims(conn, next(iter(dims)) if dims else None)
            self._delete_rids(conn, self._file_rids(conn, file.source, file.path))
            self._insert_chunks(
                conn, [(c, v, model) for c, v in zip(chunks, vectors, strict=True)], self._now(conn)
            )
            conn.exec_driver_sql(
                "INSERT INTO files(source, path, hash, mtime, size) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT(source, path) DO UPDATE SET hash = excluded.hash, "
                "mtime = excluded.mtime, size = excluded.size",
                (file.source, file.path, file.hash, file.mtime, file.size),
            )
            self._bump_generation(conn)

        self._db.write(work)

    def set_meta(self, meta: IndexMeta) -> None:
        """Store the meta; a new `dimensions` rebuilds the vector table (see IndexWriter)."""

        def work(conn: Connection) -> None:
            conn.exec_driver_sql(_UPSERT_META, (INDEX_META_KEY, _meta_to_json(meta)))
            if meta.dimensions is None:
                return
            current = self._dims(conn)
            if current is None:
                self._adopt_dims(conn, meta.dimensions)
            elif current != meta.dimensions:
                conn.exec_driver_sql(
                    "UPDATE chunks SET embedding = NULL, model = ? WHERE embedding IS NOT NULL",
                    (KEYWORD_ONLY_MODEL,),
                )
                if self._db.vector_status()[0] or not schema.table_exists(conn, schema.VEC_TABLE):
                    conn.exec_driver_sql(f"DROP TABLE IF EXISTS {schema.VEC_TABLE}")
                self._adopt_dims(conn, meta.dimensions)
                self._bump_generation(conn)

        self._db.write(work)

    def touch_file(self, file: IndexedFile) -> None:
        """Update mtime and size of an indexed file (no-op if it is not indexed)."""
        self._db.write(
            lambda conn: conn.exec_driver_sql(
                "UPDATE files SET mtime = ?, size = ? WHERE source = ? AND path = ?",
                (file.mtime, file.size, file.source, file.path),
            )
        )

    def delete_file(self, source: Source, path: str) -> None:
        """Remove every row of one file in one transaction (no-op if it is not indexed)."""

        def work(conn: Connection) -> None:
            self._delete_rids(conn, self._file_rids(conn, source, path))
            conn.exec_driver_sql("DELETE FROM files WHERE source = ? AND path = ?", (source, path))
            self._bump_generation(conn)

        self._db.write(work)

    def set_vectors(self, model: str, vectors: Mapping[ChunkId, Vector]) -> None:
        """Attach vectors to existing chunks in one transaction (unknown ids are ignored).

        A chunk whose vector changes is re-inserted under a new rid (see vector_matrix.py).
        """
        if not vectors:
            return
        dims = {len(v) for v in vectors.values()}
        if len(dims) > 1:
            raise DimensionMismatch(f"vectors have several lengths: {sorted(dims)}")
        for v in vectors.values():
            _check_vector(v)

        def work(conn: Connection) -> None:
            self._ensure_dims(conn, next(iter(dims)))
            found = self._read_chunk_rows(conn, list(vectors))
            self._delete_rids(conn, [rid for rid, _ in found])
            self._insert_chunks(
                conn, [(chunk, vectors[chunk.id], model) for _, chunk in found], self._now(conn)
            )
            self._bump_generation(conn)

        self._db.write(work)

    def cache_put(self, key: CacheKey, vectors: Mapping[ContentHash, Vector]) -> None:
        """Store vectors in the cache; they become the most recently used entries."""
        if not vectors:
            return
        for v in vectors.values():
            _check_vector(v)

        def work(conn: Connection) -> None:
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

        self._db.write(work)

    def cache_prune(self, max_entries: int) -> int:
        """Delete the least recently put entries beyond `max_entries`; return how many."""

        def work(conn: Connection) -> int:
            total = int(conn.exec_driver_sql("SELECT count(*) FROM embedding_cache").scalar_one())
            excess = total - max(0, max_entries)
            if excess <= 0:
                return 0
            conn.exec_driver_sql(
                "DELETE FROM embedding_cache WHERE rowid IN (SELECT rowid FROM embedding_cache "
                "ORDER BY last_used, rowid LIMIT ?)",
                (excess,),
            )
            return excess

        return self._db.write(work)

    # --- reads ---------------------------------------------------------------------------------

    def meta(self) -> IndexMeta | None:
        """Return the stored meta, or None for an index never written."""
        with self._db.read() as conn:
            value = _meta_map(conn, [INDEX_META_KEY]).get(INDEX_META_KEY)
        return None if value is None else _meta_from_json(value)

    @staticmethod
    def _file_from_row(row: Sequence[object]) -> IndexedFile:
        return IndexedFile(
            source=cast(Source, row[0]),
            path=str(row[1]),
            hash=ContentHash(str(row[2])),
            mtime=float(cast(float, row[3])),
            size=int(cast(int, row[4])),
        )

    def file(self, source: Source, path: str) -> IndexedFile | None:
        """Return the `files` row of one file, or None if it is not indexed."""
        with self._db.read() as conn:
            row = conn.exec_driver_sql(
                "SELECT source, path, hash, mtime, size FROM files WHERE source = ? AND path = ?",
                (source, path),
            ).first()
        return None if row is None else self._file_from_row(tuple(row))

    def files(self, source: Source | None = None) -> list[IndexedFile]:
        """Return the indexed files (of one source, or all), sorted by source then path."""
        sql = "SELECT source, path, hash, mtime, size FROM files"
        args: tuple[str, ...] = ()
        if source is not None:
            sql += " WHERE source = ?"
            args = (source,)
        with self._db.read() as conn:
            rows = conn.exec_driver_sql(sql + " ORDER BY source, path", args).all()
        return [self._file_from_row(tuple(r)) for r in rows]

    def counts(self) -> list[SourceCount]:
        """Return files and chunks per source present in the index."""
        with self._db.read() as conn:
            file_counts: dict[str, int] = {
                str(s): int(n)
                for s, n in conn.exec_driver_sql(
                    "SELECT source, count(*) FROM files GROUP BY source"
                )
            }
            chunk_counts: dict[str, int] = {
                str(s): int(n)
                for s, n in conn.exec_driver_sql(
                    "SELECT source, count(*) FROM chunks GROUP BY source"
                )
            }
        return [
            SourceCount(cast(Source, s), int(file_counts.get(s, 0)), int(chunk_counts.get(s, 0)))
            for s in sorted(set(file_counts) | set(chunk_counts))
        ]

    @staticmethod
    def _chunk_from_row(row: Sequence[object]) -> Chunk:
        return Chunk(
            id=ChunkId(str(row[0])),
            source=cast(Source, row[1]),
            path=str(row[2]),
            start_line=int(cast(int, row[3])),
            end_line=int(cast(int, row[4])),
            text=str(row[5]),
            hash=ContentHash(str(row[6])),
            timestamp=None if row[7] is None else float(cast(float, row[7])),
        )

    _CHUNK_COLUMNS = "id, source, path, start_line, end_line, text, hash, timestamp"

    def _read_chunk_rows(self, conn: Connection, ids: Sequence[str]) -> list[tuple[int, Chunk]]:
        found: list[tuple[int, Chunk]] = []
        for batch in _batches(ids):
            rows = conn.exec_driver_sql(
                f"SELECT rid, {self._CHUNK_COLUMNS} FROM chunks "
                f"WHERE id IN ({_placeholders(len(batch))})",
                tuple(batch),
            ).all()
            found.extend((int(r[0]), self._chunk_from_row(tuple(r)[1:])) for r in rows)
        return found

    def read_chunks(self, ids: Sequence[ChunkId]) -> list[Chunk]:
        """Return the chunks with these ids, in the order asked (missing ids are skipped)."""
        with self._db.read() as conn:
            by_id = {chunk.id: chunk for _, chunk in self._read_chunk_rows(conn, list(ids))}
        return [by_id[i] for i in ids if i in by_id]

    def chunks_without_vectors(self, model: str, limit: int = 1000) -> list[Chunk]:
        """Return chunks whose vector is missing or was made by another model."""
        with self._db.read() as conn:
            rows = conn.exec_driver_sql(
                f"SELECT {self._CHUNK_COLUMNS} FROM chunks "
                "WHERE embedding IS NULL OR model != ? ORDER BY rid LIMIT ?",
                (model, max(0, limit)),
            ).all()
        return [self._chunk_from_row(tuple(r)) for r in rows]

    def _candidates(self, conn: Connection, scored: Sequence[tuple[int, float]]) -> list[Candidate]:
        if not scored:
            return []
        rids = [rid for rid, _ in scored]
        rows: dict[int, tuple[object, ...]] = {}
        for batch in _batches(rids):
            for found in conn.exec_driver_sql(
                f"SELECT {_CANDIDATE_COLUMNS} FROM chunks c LEFT JOIN files f "
                "ON f.source = c.source AND f.path = c.path "
                f"WHERE c.rid IN ({_placeholders(len(batch))})",
                tuple(batch),
            ):
                rows[int(found[0])] = tuple(found)
        result = []
        for rid, score in scored:
            row = rows.get(rid)
            if row is None:
                continue
            result.append(
                Candidate(
                    chunk_id=ChunkId(str(row[1])),
                    source=cast(Source, row[2]),
                    path=str(row[3]),
                    start_line=int(cast(int, row[4])),
                    end_line=int(cast(int, row[5])),
                    text=str(row[6]),
                    score=score,
                    file_mtime=None if row[8] is None else float(cast(float, row[8])),
                    timestamp=None if row[7] is None else float(cast(float, row[7])),
                )
            )
        return result

    def search_vector(
        self, vector: Vector, *, model: str, sources: Sequence[Source], limit: int
    ) -> list[Candidate]:
        """Return the `limit` chunks nearest to `vector` by cosine (see IndexStore)."""
        _check_vector(vector)
        if limit <= 0 or not sources or not vector:
            return []
        if math.fsum(x * x for x in vector) == 0.0:
            return []
        with self._db.read() as conn:
            state = _meta_map(
                conn, [migrations.DB_ID_KEY, migrations.GENERATION_KEY, migrations.VECTOR_DIMS_KEY]
            )
            dims_text = state.get(migrations.VECTOR_DIMS_KEY)
            if dims_text is None:
                return []
            dims = int(dims_text)
            if len(vector) != dims:
                raise DimensionMismatch(f"query has {len(vector)} dimensions, the index has {dims}")
            if self._vector_search == "vec0" and self._vec_ready(conn):
                scored = self._vec0_top(conn, vector, model, sources, limit)
            else:
                self._matrix.refresh(
                    conn,
                    state.get(migrations.DB_ID_KEY, ""),
                    state.get(migrations.GENERATION_KEY, "0"),
                    dims,
                )
                scored = [
                    (hit.rid, hit.score) for hit in self._matrix.top(vector, model, sources, limit)
                ]
            return self._candidates(conn, scored)

    def _vec0_top(
        self,
        conn: Connection,
        vector: Vector,
        model: str,
        sources: Sequence[Source],
        limit: int,
    ) -> list[tuple[int, float]]:
        """KNN through vec0, over-fetching until `limit` rows pass the model/source filter."""
        total = int(conn.exec_driver_sql("SELECT count(*) FROM chunks_vec_rowids").scalar_one())
        blob = to_blob(vector)
        k = max(limit * 4, 32)
        while True:
            k = min(k, 4096, max(total, 1))
            rows = conn.exec_driver_sql(
                f"SELECT v.rowid, v.distance FROM {schema.VEC_TABLE} v "
                "JOIN chunks c ON c.rid = v.rowid "
                f"WHERE v.embedding MATCH ? AND k = ? AND c.model = ? "
                f"AND c.source IN ({_placeholders(len(sources))}) ORDER BY v.distance",
                (blob, k, model, *sources),
            ).all()
            if len(rows) >= limit or k >= min(total, 4096):
                return [(int(r[0]), 1.0 - float(r[1])) for r in rows[:limit]]
            k *= 4

    def search_keyword(
        self, match: str, *, sources: Sequence[Source], limit: int
    ) -> list[Candidate]:
        """Return the `limit` best bm25 matches of an FTS5 MATCH expression (see IndexStore)."""
        if limit <= 0 or not sources or not match.strip():
            return []
        everything = set(ALL_SOURCES) <= set(sources)
        if everything:
            # Fast path: FTS5 can stop after the best `limit` rows when nothing else filters.
            sql = (
                f"SELECT rowid, rank FROM {schema.FTS_TABLE} WHERE {schema.FTS_TABLE} MATCH ? "
                "ORDER BY rank LIMIT ?"
            )
            args: tuple[object, ...] = (match, limit)
        else:
            sql = (
                f"SELECT t.rowid, t.rank FROM {schema.FTS_TABLE} t "
                "JOIN chunks c ON c.rid = t.rowid "
                f"WHERE {schema.FTS_TABLE} MATCH ? AND c.source IN ({_placeholders(len(sources))}) "
                "ORDER BY t.rank LIMIT ?"
            )
            args = (match, *sources, limit)
        with self._db.read() as conn:
            try:
                with conn.begin_nested():
                    rows = conn.exec_driver_sql(sql, args).all()
            except DRIVER_ERRORS as exc:
                message = str(exc).lower()
                if any(marker in message for marker in _FTS_QUERY_ERRORS):
                    return []
                raise
            return self._candidates(conn, [(int(r[0]), float(r[1])) for r in rows])

    def cache_get(self, key: CacheKey, hashes: Sequence[ContentHash]) -> dict[ContentHash, Vector]:
        """Return cached vectors for the hashes found (reading does not refresh recency)."""
        found: dict[ContentHash, Vector] = {}
        unique = list(dict.fromkeys(hashes))
        with self._db.read() as conn:
            for batch in _batches(unique):
                for h, blob in conn.exec_driver_sql(
                    "SELECT hash, embedding FROM embedding_cache WHERE provider = ? AND model = ? "
                    f"AND provider_key = ? AND hash IN ({_placeholders(len(batch))})",
                    (key.provider, key.model, key.provider_key, *batch),
                ):
                    vector = from_blob(blob)
                    if vector:
                        found[ContentHash(str(h))] = vector
        return found

    def cache_size(self) -> int:
        """Return the number of cached vectors."""
        with self._db.read() as conn:
            return int(conn.exec_driver_sql("SELECT count(*) FROM embedding_cache").scalar_one())

    # --- lifecycle -----------------------------------------------------------------------------

    def begin_rebuild(self) -> IndexRebuild:
        """Start a full reindex into a temporary database (`temp_files.temp_path_for`) with the
        embedding cache copied over."""
        from memlane.adapters.store.rebuild import SqliteIndexRebuild

        temp = temp_path_for(self._db.path)
        return SqliteIndexRebuild.start(self, temp, vector_search=self._vector_search)

    def vector_status(self) -> tuple[bool, str | None]:
        """Return (sqlite-vec loaded, load error or None)."""
        return self._db.vector_status()

    def recovery_stats(self) -> RecoveryStats:
        """Return the read-only recovery counters (§12.4)."""
        return self._db.recovery_stats()

    def location(self) -> str:
        """Return the database file path."""
        return str(self._db.path)

    def invalidate_caches(self) -> None:
        """Forget in-process caches (after the file was swapped under this store)."""
        self._matrix.invalidate()

    def close(self) -> None:
        """Release connections; idempotent."""
        self._db.close()
