"""The in-process vector matrix stays equal to a fresh reload through writes by any store."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.domain.chunks import ChunkId
from memlane.domain.sources import ALL_SOURCES
from tests.integration.store.helpers import DIMS, make_chunks, make_file

pytestmark = pytest.mark.integration


def _vector(rng: random.Random) -> list[float]:
    return [rng.uniform(-1, 1) for _ in range(DIMS)]


def _top(store: SqliteIndexStore, query: list[float]) -> list[tuple[str, float]]:
    hits = store.search_vector(query, model="m", sources=ALL_SOURCES, limit=15)
    return [(h.chunk_id, round(h.score, 5)) for h in hits]


class TestIncrementalRefresh:
    def test_writes_from_another_store_are_seen_like_a_fresh_reload(self, tmp_path: Path) -> None:
        """Replace, delete and set_vectors by a writer; a long-lived reader stays exact."""
        path = tmp_path / "index.db"
        writer = SqliteIndexStore.open(path)
        reader = SqliteIndexStore.open(path)
        rng = random.Random(7)
        for step in range(30):
            name = f"memory/f{rng.randrange(12)}.md"
            action = rng.random()
            if action < 0.6:
                chunks = make_chunks(name, rng.randrange(1, 6), version=f"v{step}")
                writer.replace_file(make_file(name), chunks, [_vector(rng) for _ in chunks], "m")
            elif action < 0.8:
                writer.delete_file("memory", name)
            else:
                targets = [c.id for c in writer.chunks_without_vectors("other", limit=3)]
                writer.set_vectors("m", {ChunkId(t): _vector(rng) for t in targets})
            query = _vector(rng)

            fresh = SqliteIndexStore.open(path)
            assert _top(reader, query) == _top(fresh, query)
            fresh.close()
        writer.close()
        reader.close()
