"""Fake: an in-memory IndexStore with the same contract as SqliteIndexStore.

Vector search is brute-force cosine. Keyword search understands the MATCH expressions that
`domain.keywords` builds (double-quoted terms joined by OR/AND): a chunk matches when one of the
terms occurs as a phrase among the `fts_document` tokens of its text, and its rank is minus the
number of term occurrences (negative, lower is better, like bm25). An unbalanced quote counts as
an FTS5 syntax error and gives [].
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from memlane.application.ports.embedding import Vector
from memlane.application.ports.index_store import (
    CacheKey,
    DimensionMismatch,
    FirstIndexState,
    IndexedFile,
    IndexRebuild,
    RecordedIssue,
    SourceCount,
    StoreError,
    SyncRecord,
    VectorIndexState,
    VectorProgress,
)
from memlane.domain.chunks import Chunk, ChunkId, ContentHash
from memlane.domain.index_meta import KEYWORD_ONLY_MODEL, IndexMeta
from memlane.domain.keywords import fts_document
from memlane.domain.note_pieces import has_pieces
from memlane.domain.search import Candidate, TimeWindow
from memlane.domain.sources import Source

_TOKEN = re.compile(r"[^\W_]+")
_QUOTED = re.compile(r'"((?:[^"]|"")*)"')


def _tokens(text: str) -> list[str]:
    decomposed = unicodedata.normalize("NFKD", text.lower())
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _TOKEN.findall(stripped)


def _phrase_count(doc: Sequence[str], phrase: Sequence[str]) -> int:
    n = len(phrase)
    if n == 0:
        return 0
    return sum(1 for i in range(len(doc) - n + 1) if list(doc[i : i + n]) == list(phrase))


def _parse_match(match: str) -> list[list[str]] | None:
    """Return the phrases of a MATCH expression, or None for a syntax error."""
    if match.count('"') % 2:
        return None
    phrases = [_tokens(m.replace('""', '"')) for m in _QUOTED.findall(match)]
    bare = _tokens(_QUOTED.sub(" ", match))
    phrases.extend([t] for t in bare if t not in {"or", "and", "not", "near"})
    phrases = [p for p in phrases if p]
    return phrases or None


def _check_vector(vector: Sequence[float]) -> None:
    if not all(math.isfinite(x) for x in vector):
        raise StoreError("vector has NaN or infinite components; sanitise it before storing")


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(math.fsum(x * x for x in a))
    nb = math.sqrt(math.fsum(y * y for y in b))
    if na == 0 or nb == 0:
        return 0.0
    return max(-1.0, min(1.0, dot / (na * nb)))


@dataclass(slots=True)
class _Row:
    chunk: Chunk
    vector: Vector | None
    model: str
    seq: int


@dataclass(slots=True)
class _State:
    files: dict[tuple[str, str], IndexedFile] = field(default_factory=dict)
    rows: dict[ChunkId, _Row] = field(default_factory=dict)
    meta: IndexMeta | None = None
    dims: int | None = None
    cache: OrderedDict[tuple[CacheKey, ContentHash], Vector] = field(default_factory=OrderedDict)
    seq: int = 0
    # Like the SQLite file, a rebuild's swap replaces these too (the sync records them again).
    issues: list[RecordedIssue] = field(default_factory=list)
    last_sync: SyncRecord | None = None
    # A first index under way: what it builds, its files, and whether another (simulated)
    # process writes it (running_elsewhere) or this store did (claim_first_index).
    first_index: tuple[IndexMeta, int, bool | None, bool] | None = None
    # Note chunks' piece vectors: chunk id -> (model, vectors); they go when the chunk goes.
    pieces: dict[ChunkId, tuple[str, list[Vector]]] = field(default_factory=dict)


class _FakeWriter:
    """Write operations on a `_State` (shared by the live fake and its rebuilds)."""

    def __init__(self, state: _State) -> None:
        self._state = state

    def _ensure_dims(self, dims: int | None) -> None:
        if dims is None:
            return
        if self._state.dims is None:
            self._state.dims = dims
        elif self._state.dims != dims:
            raise DimensionMismatch(
                f"vectors have {dims} dimensions, the index has {self._state.dims}"
            )

    def _insert(self, chunk: Chunk, vector: Vector | None, model: str) -> None:
        self._state.seq += 1
        self._state.rows[chunk.id] = _Row(
            chunk, None if vector is None else list(vector),
            model if vector is not None else KEYWORD_ONLY_MODEL, self._state.seq,
        )  # fmt: skip

    def replace_file(
        self,
        file: IndexedFile,
        chunks: Sequence[Chunk],
        vectors: Sequence[Vector | None],
        model: str,
    ) -> None:
        if len(vectors) != len(chunks):
            raise StoreError(f"{len(chunks)} chunks but {len(vectors)} vectors")
        ids = [c.id for c in chunks]
        if len(set(ids)) != len(ids):
            raise StoreError("duplicate chunk ids")
        if any((c.source, c.path) != (file.source, file.path) for c in chunks):
            raise StoreError("a chunk belongs to another file")
        dims = {len(v) for v in vectors if v is not None}
        if len(dims) > 1:
            raise DimensionMismatch("vectors of one file have several lengths")
        for v in vectors:
            if v is not None:
                _check_vector(v)
        if dims and self._state.dims is not None and self._state.dims not in dims:
            raise DimensionMismatch("vectors differ from the index's dimensions")
        others = {
            cid for cid, row in self._state.rows.items()
            if (row.chunk.source, row.chunk.path) != (file.source, file.path)
        }  # fmt: skip
        if others & set(ids):
            raise StoreError("a chunk id is already used by another file")
        self._ensure_dims(next(iter(dims)) if dims else None)
        self._drop_file(file.source, file.path, keep=ids)
        for chunk, vector in zip(chunks, vectors, strict=True):
            self._insert(chunk, vector, model)
        self._state.files[(file.source, file.path)] = file

    def _drop_file(self, source: str, path: str, keep: Sequence[ChunkId] = ()) -> None:
        for cid in [
            cid for cid, row in self._state.rows.items()
            if (row.chunk.source, row.chunk.path) == (source, path)
        ]:  # fmt: skip
            del self._state.rows[cid]
        self._state.pieces = {
            cid: p
            for cid, p in self._state.pieces.items()
            if cid in self._state.rows or cid in keep
        }

    def set_meta(self, meta: IndexMeta) -> None:
        self._state.meta = meta
        self._state.first_index = None
        if meta.dimensions is None:
            return
        if self._state.dims is not None and self._state.dims != meta.dimensions:
            for row in self._state.rows.values():
                if row.vector is not None:
                    row.vector = None
                    row.model = KEYWORD_ONLY_MODEL
        self._state.dims = meta.dimensions

    def cache_get(self, key: CacheKey, hashes: Sequence[ContentHash]) -> dict[ContentHash, Vector]:
        found: dict[ContentHash, Vector] = {}
        for h in hashes:
            vector = self._state.cache.get((key, h))
            if vector:
                found[h] = list(vector)
        return found

    def cache_put(self, key: CacheKey, vectors: Mapping[ContentHash, Vector]) -> None:
        for v in vectors.values():
            _check_vector(v)
        for h, v in vectors.items():
            self._state.cache[(key, h)] = list(v)
            self._state.cache.move_to_end((key, h))


class FakeIndexRebuild(_FakeWriter):
    """A rebuild into a fresh in-memory state; `commit` swaps it into the live fake."""

    def __init__(self, live: FakeIndexStore) -> None:
        super().__init__(_State(cache=OrderedDict(live._state.cache)))
        self._live = live
        self._finished = False

    def commit(self) -> None:
        if self._finished:
            raise StoreError("rebuild already finished")
        for entry, vector in self._live._state.cache.items():
            self._state.cache.setdefault(entry, vector)
        self._state.seq = max(self._state.seq, self._live._state.seq)
        if self._state.last_sync is None:  # the sync before, until the rebuilding one records
            self._state.last_sync = self._live._state.last_sync
        self._live._state = self._state
        self._finished = True

    def abort(self) -> None:
        self._finished = True


class FakeIndexStore(_FakeWriter):
    """In-memory IndexStore (see module docstring)."""

    def __init__(self) -> None:
        super().__init__(_State())
        self.closed = False
        self._pieces_after: dict[str, int] = {}  # the walk for chunks lacking pieces
        self.rebuilding_elsewhere = False  # test switch: another process rebuilds aside now
        self.vanished_reason: str | None = None  # test switch: the index's file was deleted

    def meta(self) -> IndexMeta | None:
        return self._state.meta

    def first_index(self) -> FirstIndexState | None:
        if self._state.first_index is None:
            return None
        meta, total, running, here = self._state.first_index
        return FirstIndexState(
            meta=meta,
            files_total=total,
            files_done=len(self._state.files),
            running=running,
            here=here,
        )

    def claim_first_index(self, meta: IndexMeta, files_total: int) -> bool:
        current = self.first_index()
        if current is not None and current.running_elsewhere:
            return False
        self._state.first_index = (meta, files_total, True, True)
        return True

    def rebuild_elsewhere(self) -> bool:
        return self.rebuilding_elsewhere

    def first_index_elsewhere(self, meta: IndexMeta, files_total: int, *, running: bool) -> None:
        """Test helper: another process started (and, unless `running`, died during) a first
        index of this store."""
        self._state.first_index = (meta, files_total, running, False)

    def file(self, source: Source, path: str) -> IndexedFile | None:
        return self._state.files.get((source, path))

    def files(self, source: Source | None = None) -> list[IndexedFile]:
        return sorted(
            (f for f in self._state.files.values() if source is None or f.source == source),
            key=lambda f: (f.source, f.path),
        )

    def touch_file(self, file: IndexedFile) -> None:
        current = self._state.files.get((file.source, file.path))
        if current is not None:
            self._state.files[(file.source, file.path)] = replace(
                current, mtime=file.mtime, size=file.size
            )

    def delete_file(self, source: Source, path: str) -> None:
        self._drop_file(source, path)
        self._state.files.pop((source, path), None)

    def counts(self) -> list[SourceCount]:
        sources = {f.source for f in self._state.files.values()} | {
            r.chunk.source for r in self._state.rows.values()
        }
        return [
            SourceCount(
                s,
                sum(1 for f in self._state.files.values() if f.source == s),
                sum(1 for r in self._state.rows.values() if r.chunk.source == s),
            )
            for s in sorted(sources)
        ]

    def chunks_without_vectors(self, model: str, limit: int = 1000) -> list[Chunk]:
        rows = sorted(self._state.rows.values(), key=lambda r: r.seq)
        return [r.chunk for r in rows if r.vector is None or r.model != model][: max(0, limit)]

    def chunks_without_pieces(self, model: str, limit: int = 1000) -> list[Chunk]:
        """Like the real stores, a walk in insertion order that goes on from where it stopped
        and starts again from the first at the end."""
        waiting = self._waiting_for_pieces(model)
        after = self._pieces_after.get(model, 0)
        found = [r for r in waiting if r.seq > after][: max(0, limit)] or waiting[: max(0, limit)]
        if found:
            self._pieces_after[model] = found[-1].seq
        return [r.chunk for r in found]

    def pieces_owed(self, model: str, at_most: int) -> int:
        return min(len(self._waiting_for_pieces(model)), max(0, at_most))

    def _waiting_for_pieces(self, model: str) -> list[_Row]:
        rows = sorted(self._state.rows.values(), key=lambda r: r.seq)
        return [
            r
            for r in rows
            if has_pieces(r.chunk.source)
            and r.vector is not None
            and r.model == model
            and self._state.pieces.get(r.chunk.id, ("", []))[0] != model
        ]

    def set_pieces(self, model: str, pieces: Mapping[ChunkId, Sequence[Vector]]) -> None:
        for vectors in pieces.values():
            for v in vectors:
                _check_vector(v)
        for cid, vectors in pieces.items():
            if cid in self._state.rows and vectors:
                self._state.pieces[cid] = (model, [list(v) for v in vectors])

    def piece_cosines(
        self, vector: Vector, *, model: str, ids: Sequence[ChunkId]
    ) -> dict[ChunkId, tuple[float, float | None]]:
        out: dict[ChunkId, tuple[float, float | None]] = {}
        for cid in ids:
            row = self._state.rows.get(cid)
            if row is None or row.vector is None or row.model != model:
                continue
            held = self._state.pieces.get(cid)
            best = (
                max(_cosine(vector, p) for p in held[1])
                if held is not None and held[0] == model
                else None
            )
            out[cid] = (_cosine(vector, row.vector), best)
        return out

    def vector_progress(self, model: str) -> VectorProgress:
        rows = self._state.rows.values()
        done = sum(1 for r in rows if r.vector is not None and r.model == model)
        return VectorProgress(done=done, total=len(self._state.rows))

    def set_vectors(self, model: str, vectors: Mapping[ChunkId, Vector]) -> None:
        if not vectors:
            return
        dims = {len(v) for v in vectors.values()}
        if len(dims) > 1:
            raise DimensionMismatch("vectors have several lengths")
        for v in vectors.values():
            _check_vector(v)
        self._ensure_dims(next(iter(dims)))
        for cid, vector in vectors.items():
            row = self._state.rows.get(cid)
            if row is not None:
                self._insert(row.chunk, vector, model)

    def _candidate(self, row: _Row, score: float) -> Candidate:
        file = self._state.files.get((row.chunk.source, row.chunk.path))
        return Candidate(
            chunk_id=row.chunk.id,
            source=row.chunk.source,
            path=row.chunk.path,
            start_line=row.chunk.start_line,
            end_line=row.chunk.end_line,
            text=row.chunk.text,
            score=score,
            file_mtime=None if file is None else file.mtime,
            timestamp=row.chunk.timestamp,
            time_start=row.chunk.time_start,
            time_end=row.chunk.time_end,
        )

    def search_vector(
        self,
        vector: Vector,
        *,
        model: str,
        sources: Sequence[Source],
        limit: int,
        window: TimeWindow | None = None,
    ) -> list[Candidate]:
        _check_vector(vector)
        if limit <= 0 or not sources or not vector or self._state.dims is None:
            return []
        if len(vector) != self._state.dims:
            raise DimensionMismatch(
                f"query has {len(vector)} dimensions, the index has {self._state.dims}"
            )
        if math.fsum(x * x for x in vector) == 0.0:
            return []
        scored = [
            (_cosine(vector, row.vector), row)
            for row in sorted(self._state.rows.values(), key=lambda r: r.seq)
            if row.vector is not None
            and row.model == model
            and row.chunk.source in sources
            and (window is None or window.holds(row.chunk.time_start, row.chunk.time_end))
        ]
        scored.sort(key=lambda pair: -pair[0])
        return [self._candidate(row, score) for score, row in scored[:limit]]

    def background_cosines(self, vector: Vector, *, model: str, limit: int) -> list[float]:
        _check_vector(vector)
        if limit <= 0 or not vector:
            return []
        sample = sorted(
            (row for row in self._state.rows.values() if row.vector is not None),
            key=lambda r: r.chunk.id,
        )
        return [
            _cosine(vector, row.vector)
            for row in sample
            if row.model == model and row.vector is not None and len(row.vector) == len(vector)
        ][:limit]

    def search_keyword(
        self,
        match: str,
        *,
        sources: Sequence[Source],
        limit: int,
        window: TimeWindow | None = None,
    ) -> list[Candidate]:
        if limit <= 0 or not sources or not match.strip():
            return []
        phrases = _parse_match(match)
        if phrases is None:
            return []
        scored = []
        for row in sorted(self._state.rows.values(), key=lambda r: r.seq):
            if row.chunk.source not in sources:
                continue
            if window is not None and not window.holds(row.chunk.time_start, row.chunk.time_end):
                continue
            doc = _tokens(fts_document(row.chunk.indexed_text))
            hits = sum(_phrase_count(doc, p) for p in phrases)
            if hits:
                scored.append((-hits / (1.0 + len(doc) / 100.0), row))
        scored.sort(key=lambda pair: pair[0])
        return [self._candidate(row, score) for score, row in scored[:limit]]

    def keyword_document_counts(self, terms: Sequence[str]) -> tuple[int, list[int]]:
        docs = [_tokens(fts_document(row.chunk.indexed_text)) for row in self._state.rows.values()]
        phrases = [_tokens(fts_document(term)) for term in terms]
        return len(docs), [sum(1 for d in docs if _phrase_count(d, p)) for p in phrases]

    def cache_prune(self, max_entries: int) -> int:
        excess = len(self._state.cache) - max(0, max_entries)
        for _ in range(max(0, excess)):
            self._state.cache.popitem(last=False)
        return max(0, excess)

    def cache_size(self) -> int:
        return len(self._state.cache)

    def begin_rebuild(self) -> IndexRebuild:
        return FakeIndexRebuild(self)

    def issues(self) -> list[RecordedIssue]:
        return sorted(self._state.issues, key=lambda i: (i.key, i.path))

    def replace_issues(self, issues: Sequence[RecordedIssue]) -> None:
        self._state.issues = list({(i.key, i.path): i for i in issues}.values())

    def last_sync(self) -> SyncRecord | None:
        return self._state.last_sync

    def record_sync(self, record: SyncRecord) -> None:
        self._state.last_sync = record

    def vector_status(self) -> tuple[bool, str | None]:
        return True, None

    def vector_index_state(self) -> VectorIndexState:
        return VectorIndexState("fake", None, "in memory")

    def location(self) -> str:
        return ":memory:"

    def vanished(self) -> str | None:
        return self.vanished_reason

    def close(self) -> None:
        self.closed = True
