"""Contract: `since` / `until` filter inside both legs of every IndexStore, before the top k.

Chunks outside the window match the query better in both legs; a filtered search must still
return k hits from inside the window (a filter applied after the top k would return none).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memlane.adapters.store import code_file_place, vector_code_index
from memlane.adapters.store.database import SqliteDatabase
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.application.ports.index_store import IndexStore
from memlane.domain.chunks import Chunk, ChunkId, ContentHash
from memlane.domain.search import TimeWindow
from memlane.domain.sources import ALL_SOURCES
from tests.contract._index_store_support import MODEL, make_file, make_meta
from tests.contract._index_store_support import store as store  # noqa: PLC0414 (the fixture)

DAY = 86_400.0
INSIDE = TimeWindow(since=100 * DAY, until=110 * DAY - 1)
QUERY = [1.0, 0.0, 0.0, 0.0]


def _chunk(n: int, text: str, start: float | None, end: float | None) -> Chunk:
    return Chunk(
        id=ChunkId(f"memory:memory/t.md:{n}"),
        source="memory",
        path="memory/t.md",
        start_line=n + 1,
        end_line=n + 1,
        text=text,
        hash=ContentHash(f"h-{n}"),
        time_start=start,
        time_end=end,
    )


def _seed(store: IndexStore, inside: int, outside: int) -> set[str]:
    """`outside` strong matches dated long before the window, `inside` weaker ones dated in it
    (one of them only overlapping its start), one strong match without a time; return the ids
    inside."""
    chunks: list[Chunk] = []
    vectors: list[list[float]] = []
    for n in range(outside):
        chunks.append(_chunk(n, "apples apples apples", 10 * DAY + n, 10 * DAY + n))
        vectors.append([1.0, 0.001 * n, 0.0, 0.0])
    for k in range(inside):
        n = outside + k
        start = 99 * DAY if k == 0 else 100 * DAY + k * 60
        chunks.append(_chunk(n, f"apples pears plums figs kiwis {k}", start, 100 * DAY + k * 60))
        vectors.append([1.0, 1.0 + 0.01 * k, 0.5, 0.0])
    chunks.append(_chunk(outside + inside, "apples apples apples apples", None, None))
    vectors.append([1.0, 0.0, 0.0, 0.0])
    store.replace_file(make_file("memory/t.md"), chunks, vectors, MODEL)
    store.set_meta(make_meta())
    return {c.id for c in chunks[outside : outside + inside]}


class TestWindowInsideTheLegs:
    def test_the_keyword_leg_returns_k_hits_from_the_window(self, store: IndexStore) -> None:
        inside = _seed(store, inside=8, outside=30)

        unfiltered = store.search_keyword('"apples"', sources=ALL_SOURCES, limit=5)
        hits = store.search_keyword('"apples"', sources=ALL_SOURCES, limit=5, window=INSIDE)

        assert not {c.chunk_id for c in unfiltered} & inside
        assert len(hits) == 5
        assert {c.chunk_id for c in hits} <= inside
        assert all(c.time_start is not None and c.time_end is not None for c in hits)

    def test_the_vector_leg_returns_k_hits_from_the_window(self, store: IndexStore) -> None:
        inside = _seed(store, inside=8, outside=30)

        unfiltered = store.search_vector(QUERY, model=MODEL, sources=ALL_SOURCES, limit=5)
        hits = store.search_vector(QUERY, model=MODEL, sources=ALL_SOURCES, limit=5, window=INSIDE)

        assert not {c.chunk_id for c in unfiltered} & inside
        assert len(hits) == 5
        assert {c.chunk_id for c in hits} <= inside
        assert [c.score for c in hits] == sorted((c.score for c in hits), reverse=True)

    def test_a_chunk_overlapping_the_windows_start_counts(self, store: IndexStore) -> None:
        _seed(store, inside=3, outside=5)

        hits = store.search_keyword('"apples"', sources=ALL_SOURCES, limit=10, window=INSIDE)

        assert len(hits) == 3
        assert min(c.time_start or 0.0 for c in hits) == 99 * DAY

    def test_open_ends_and_an_empty_window(self, store: IndexStore) -> None:
        _seed(store, inside=3, outside=5)
        since_only = TimeWindow(since=100 * DAY)
        until_only = TimeWindow(until=20 * DAY)
        nothing = TimeWindow(since=500 * DAY, until=600 * DAY)

        def count(window: TimeWindow) -> tuple[int, int]:
            k = store.search_keyword('"apples"', sources=ALL_SOURCES, limit=50, window=window)
            v = store.search_vector(
                QUERY, model=MODEL, sources=ALL_SOURCES, limit=50, window=window
            )
            return len(k), len(v)

        assert count(since_only) == (3, 3)
        assert count(until_only) == (5, 5)
        assert count(nothing) == (0, 0)

    def test_a_chunk_without_a_time_never_passes_a_window(self, store: IndexStore) -> None:
        _seed(store, inside=2, outside=2)
        everything = TimeWindow(since=0.0, until=10_000 * DAY)

        keyword = store.search_keyword('"apples"', sources=ALL_SOURCES, limit=50, window=everything)

        assert len(keyword) == 4  # the undated chunk is the only one left out
        assert all(c.time_start is not None for c in keyword)


@pytest.mark.integration
@pytest.mark.parametrize("engine", ["codes", "numpy", "vec0"])
def test_a_window_larger_than_the_exact_pool_is_ranked_by_every_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    # The code file's scan masks the rows outside the window when there are more than it
    # scores exactly: force a code file and small pools so 250 rows take that path.
    monkeypatch.setattr(code_file_place, "MIN_ROWS", 0)
    monkeypatch.setattr(vector_code_index, "BITS_FLOOR", 1)
    monkeypatch.setattr(vector_code_index, "POOL_FLOOR", 1)
    real = SqliteIndexStore(
        SqliteDatabase.open(tmp_path / "index.db"),
        vector_search=engine,  # type: ignore[arg-type]
    )
    inside = _seed(real, inside=250, outside=250)

    hits = real.search_vector(QUERY, model=MODEL, sources=ALL_SOURCES, limit=5, window=INSIDE)
    exact = real.search_vector(QUERY, model=MODEL, sources=ALL_SOURCES, limit=500)
    real.close()

    assert len(hits) == 5
    assert {c.chunk_id for c in hits} <= inside
    best_inside = [c.chunk_id for c in exact if c.chunk_id in inside][:5]
    assert [c.chunk_id for c in hits] == best_inside


def test_a_long_chunk_around_a_window_is_found(store: IndexStore) -> None:
    # A transcript chunk over 30 days, one-hour chunks on each later day: the window is a day
    # inside the long chunk, which ends 19 days after it. The stores bound the time-index walk
    # by the longest span; a bound from any shorter span would stop before the long chunk.
    chunks = [_chunk(0, "apples long talk", 100 * DAY, 130 * DAY)]
    vectors = [[1.0, 0.5, 0.0, 0.0]]
    for n in range(1, 60):
        start = (110 + n) * DAY
        chunks.append(_chunk(n, f"apples note {n}", start, start + 3_600))
        vectors.append([1.0, 0.0, 0.001 * n, 0.0])
    store.replace_file(make_file("memory/t.md"), chunks, vectors, MODEL)
    store.set_meta(make_meta())
    window = TimeWindow(since=110 * DAY, until=111 * DAY - 1)

    keyword = store.search_keyword('"apples"', sources=ALL_SOURCES, limit=50, window=window)
    vector = store.search_vector(QUERY, model=MODEL, sources=ALL_SOURCES, limit=50, window=window)

    assert [c.chunk_id for c in keyword] == [chunks[0].id]
    assert [c.chunk_id for c in vector] == [chunks[0].id]
