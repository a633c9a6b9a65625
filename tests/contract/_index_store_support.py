"""Helpers of the IndexStore contract tests: chunk and file builders, a seeded corpus, and the
`store` fixture that yields each IndexStore (in-memory fake, SQLite with sqlite-vec and FTS5 under
each vector engine, PostgreSQL with pgvector and BM25 postings) in turn.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from memlane.adapters.postgres.database import PostgresDatabase
from memlane.adapters.postgres.postgres_index_store import PostgresIndexStore
from memlane.adapters.store import code_file_place
from memlane.adapters.store.database import SqliteDatabase
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.adapters.store.vector_search import VectorSearch
from memlane.application.ports.index_store import (
    CacheKey,
    IndexedFile,
    IndexStore,
)
from memlane.domain.chunks import Chunk, ChunkId, ContentHash
from memlane.domain.index_meta import IndexMeta
from memlane.domain.search import Candidate
from memlane.domain.sources import Source
from tests.fakes.index_store import FakeIndexStore
from tests.pg_server import unique_agent

MODEL = "test-model"


def make_file(path: str = "memory/a.md", source: Source = "memory", **kw: object) -> IndexedFile:
    values: dict[str, object] = {"hash": ContentHash(f"hash-{path}"), "mtime": 100.0, "size": 42}
    values.update(kw)
    return IndexedFile(source=source, path=path, **values)  # type: ignore[arg-type]


def make_chunk(
    n: int, text: str, path: str = "memory/a.md", source: Source = "memory", ts: float | None = None
) -> Chunk:
    return Chunk(
        id=ChunkId(f"{source}:{path}:{n}"),
        source=source,
        path=path,
        start_line=n * 10 + 1,
        end_line=n * 10 + 5,
        text=text,
        hash=ContentHash(f"h-{text}"),
        timestamp=ts,
    )


def axis(i: int, dims: int = 4) -> list[float]:
    return [1.0 if j == i else 0.0 for j in range(dims)]


def make_meta(dimensions: int | None = 4, model: str = MODEL) -> IndexMeta:
    return IndexMeta(
        schema_version=1,
        chunker_version=1,
        sources=("memory", "sessions"),
        scope_hash="scope",
        chunk_tokens=400,
        chunk_overlap=80,
        provider="fake",
        model=model,
        provider_key="key",
        dimensions=dimensions,
    )


@pytest.fixture(
    params=[
        "fake",
        pytest.param("sqlite", marks=pytest.mark.integration),
        # The default engine builds its code file only above MIN_ROWS vectors: force it here.
        pytest.param("sqlite-codefile", marks=pytest.mark.integration),
        pytest.param("sqlite-numpy", marks=pytest.mark.integration),
        pytest.param("postgres", marks=[pytest.mark.integration, pytest.mark.postgres]),
    ]
)
def store(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[IndexStore]:
    if request.param == "fake":
        yield FakeIndexStore()
        return
    if request.param == "postgres":
        pg = PostgresIndexStore(
            PostgresDatabase.open(request.getfixturevalue("pg_database")), unique_agent()
        )
        yield pg
        pg.close()
        return
    if request.param == "sqlite-codefile":
        monkeypatch.setattr(code_file_place, "MIN_ROWS", 0)
    engine: VectorSearch = "numpy" if request.param == "sqlite-numpy" else "codes"
    real = SqliteIndexStore(SqliteDatabase.open(tmp_path / "index.db"), vector_search=engine)
    assert real.vector_status() == (True, None)
    yield real
    real.close()


def seed(store: IndexStore) -> None:
    """Two memory files and one session file, each chunk on its own axis."""
    store.replace_file(
        make_file("memory/a.md"),
        [make_chunk(0, "alpha apples"), make_chunk(1, "beta bananas")],
        [axis(0), axis(1)],
        MODEL,
    )
    store.replace_file(
        make_file("memory/b.md"),
        [make_chunk(0, "gamma grapes", path="memory/b.md")],
        [axis(2)],
        MODEL,
    )
    store.replace_file(
        make_file("sessions/s.jsonl", source="sessions"),
        [make_chunk(0, "delta dates apples", path="sessions/s.jsonl", source="sessions", ts=5.0)],
        [axis(3)],
        MODEL,
    )


def ids(candidates: Sequence[Candidate]) -> list[str]:
    return [c.chunk_id for c in candidates]


def stored(store: IndexStore) -> dict[str, Chunk]:
    """Every chunk in the store by id (no chunk has a vector of a model named like this)."""
    return {c.id: c for c in store.chunks_without_vectors("no-such-model", limit=10_000)}


KEY = CacheKey("fake", MODEL, "key")
