"""A source-filtered keyword search returns what the plain filtered FTS5 query returns, whichever
path (over-fetch and filter, or the full filtered query) answers it."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.application.ports.index_store import IndexedFile
from memlane.domain.chunks import Chunk, ChunkId, ContentHash
from memlane.domain.keywords import build_fts_query
from memlane.domain.sources import Source

pytestmark = pytest.mark.integration

WORDS = [f"word{i}" for i in range(40)]


def _reference(store: SqliteIndexStore, match: str, source: Source, limit: int) -> list[float]:
    """The filtered query as it was before the over-fetch: join every match to its chunk."""
    with store.database.read() as conn:
        rows = conn.exec_driver_sql(
            "SELECT t.rank FROM chunks_fts t JOIN chunks c ON c.rid = t.rowid "
            "WHERE chunks_fts MATCH ? AND c.source = ? ORDER BY t.rank LIMIT ?",
            (match, source, limit),
        ).all()
    return [float(r[0]) for r in rows]


@pytest.fixture
def store(tmp_path: Path) -> SqliteIndexStore:
    store = SqliteIndexStore.open(tmp_path / "index.db")
    rng = random.Random(3)
    for f in range(60):
        source: Source = "sessions" if f % 8 == 0 else "memory"  # sessions are the rare source
        name = f"{source}/f{f}.md"
        chunks = [
            Chunk(
                ChunkId(f"{name}#{i}"), source, name, i + 1, i + 1,
                " ".join(rng.choices(WORDS, weights=range(40, 0, -1), k=rng.randrange(3, 30))),
                ContentHash(f"{name}#{i}"),
            )
            for i in range(5)
        ]  # fmt: skip
        store.replace_file(
            IndexedFile(source, name, ContentHash(name), 1.0, 1), chunks, [None] * 5, "m"
        )
    return store


@pytest.mark.parametrize("source", ["memory", "sessions"])
@pytest.mark.parametrize("limit", [1, 5, 40])
@pytest.mark.parametrize("words", [["word0"], ["word39"], ["word1", "word30"], ["word5", "word9"]])
def test_filtered_search_equals_the_joined_query(
    store: SqliteIndexStore, source: Source, limit: int, words: list[str]
) -> None:
    match = build_fts_query(" ".join(words))
    assert match is not None
    got = store.search_keyword(match, sources=[source], limit=limit)
    assert {c.source for c in got} <= {source}
    assert [c.score for c in got] == _reference(store, match, source, limit)
    store.close()
