"""Integration: the PostgreSQL keyword leg within a wide `since` / `until` window is ranked
first (pruned, over-fetched, the rows inside kept) and gives the filtered ranking's rows."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from memlane.adapters.postgres import keyword_search
from memlane.adapters.postgres.database import PostgresDatabase
from memlane.adapters.postgres.postgres_index_store import PostgresIndexStore
from memlane.application.ports.index_store import IndexedFile
from memlane.domain.chunks import Chunk, ChunkId, ContentHash
from memlane.domain.keywords import build_fts_query
from memlane.domain.search import TimeWindow
from memlane.domain.sources import ALL_SOURCES, Source
from tests.integration.postgres.test_pg_keyword_pruning import random_queries, random_texts
from tests.pg_server import unique_agent

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

DAY = 86_400.0


@pytest.fixture
def pg_pair(pg_database: str) -> Iterator[tuple[PostgresIndexStore, PostgresIndexStore]]:
    """The same agent through the pruned store and the unpruned reference (which always
    ranks inside the window)."""
    db = PostgresDatabase.open(pg_database)
    agent = unique_agent()
    pruned = PostgresIndexStore(db, agent)
    reference = PostgresIndexStore(db, agent, keyword_pruning=False)
    yield pruned, reference
    pruned.close()
    reference.close()


def _fill(store: PostgresIndexStore, texts: list[str], rng: random.Random) -> None:
    """Files of 7 chunks, each chunk dated a random day in 0..99 (one in nine undated)."""
    for start in range(0, len(texts), 7):
        number = start // 7
        source: Source = "sessions" if number % 3 == 0 else "memory"
        path = f"{source}/f{number}.md"
        chunks = []
        for i, text in enumerate(texts[start : start + 7]):
            day = None if rng.random() < 0.11 else rng.randrange(100) * DAY
            chunks.append(
                Chunk(
                    ChunkId(f"{source}:{path}:{i}"),
                    source,
                    path,
                    i + 1,
                    i + 1,
                    text,
                    ContentHash(f"{path}:{i}:{text}"),
                    time_start=day,
                    time_end=None if day is None else day + 3_600,
                )
            )
        store.replace_file(
            IndexedFile(source, path, ContentHash(path), 1.0, 1), chunks, [None] * len(chunks), "m"
        )


def test_a_wide_window_gives_the_filtered_rankings_rows(
    pg_pair: tuple[PostgresIndexStore, PostgresIndexStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    pruned, reference = pg_pair
    rng = random.Random(26)
    _fill(pruned, random_texts(rng, 700), rng)
    monkeypatch.setattr(keyword_search, "NARROW_ROWS", 1)  # every window is "wide"
    windows = [TimeWindow(since=15 * DAY), TimeWindow(since=40 * DAY, until=90 * DAY)]
    windows.append(TimeWindow(since=97 * DAY))  # 3 % of the rows: ranked rows fall outside
    plans: set[str] = set()
    for query in random_queries(rng, 6):  # 216 comparisons at 12 took a minute of CI
        match = build_fts_query(query)
        assert match is not None
        for window in windows:
            for sources in (ALL_SOURCES, ("memory",)):
                for limit in (1, 5, 20):
                    want = reference.search_keyword(
                        match, sources=sources, limit=limit, window=window
                    )
                    got = pruned.search_keyword(match, sources=sources, limit=limit, window=window)
                    plans.add(pruned.last_keyword_plan.split(";")[-1].strip())
                    assert [(c.chunk_id, c.score) for c in got] == [
                        (c.chunk_id, c.score) for c in want
                    ], (query, window, sources, limit, pruned.last_keyword_plan)
    assert any(p.startswith("ranked ") for p in plans)  # the wide plan answered
    assert plans & {keyword_search.FULL, keyword_search.PHRASES}  # and the fallback
