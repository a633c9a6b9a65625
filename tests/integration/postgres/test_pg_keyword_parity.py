"""Integration: PostgreSQL's keyword leg ranks exactly as SQLite FTS5's bm25() does.

The same chunks go into a SQLite store and a PostgreSQL store; every query must return the
same chunks in the same order with the same bm25 ranks (to the last bits of a double).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memlane.adapters.postgres.database import PostgresDatabase
from memlane.adapters.postgres.postgres_index_store import PostgresIndexStore
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.application.ports.index_store import IndexedFile, IndexStore
from memlane.domain.chunks import Chunk, ChunkId, ContentHash
from memlane.domain.keywords import build_fts_query
from memlane.domain.sources import ALL_SOURCES, Source
from tests.pg_server import unique_agent

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

CORPUS: dict[str, list[str]] = {
    "memory/en.md": [
        "The deployment pipeline runs the database migrations before the web servers restart.",
        "Running migrations twice is harmless: each migration checks the schema version first.",
        "We moved the staging database to a bigger machine; migrations now take two minutes.",
        "Dark mode and tabs over spaces are the user's preferences for every editor.",
        "The cafe near the office serves résumé-worthy espresso; naïve coffee drinkers beware.",
    ],
    "memory/zh.md": [
        "我们昨天讨论了新的部署方案，数据库迁移放在周六凌晨。",
        "部署方案需要运维团队确认，迁移窗口是两点到两点半。",
        "新的缓存方案降低了数据库的负载。",
    ],
    "memory/ja.md": [
        "東京で会議の資料を準備した。会議は来週の月曜日。",
        "データベースの移行は週末に行う予定です。",
        "大阪の会議では新しいデプロイ手順を説明した。",
    ],
    "sessions/ko.jsonl": [
        "서울에서 회의를 했다. 회의에서 배포 계획을 논의했다.",
        "데이터베이스 마이그레이션은 토요일 새벽에 진행한다.",
        "부산에서 열린 회의는 취소되었다.",
    ],
}

QUERIES = [
    "database migrations",
    "migration schema version",
    "dark mode preferences",
    "cafe resume",
    "deployment",
    "部署方案",
    "数据库迁移",
    "会議の資料",
    "データベース 移行",
    "회의",
    "서울에서 회의",
    "마이그레이션 토요일",
    "database 数据库 データベース 데이터베이스",
]


def _source(path: str) -> Source:
    return "sessions" if path.startswith("sessions/") else "memory"


def fill(store: IndexStore) -> None:
    for path, texts in CORPUS.items():
        source = _source(path)
        chunks = [
            Chunk(
                id=ChunkId(f"{source}:{path}:{n}"),
                source=source,
                path=path,
                start_line=n + 1,
                end_line=n + 1,
                text=text,
                hash=ContentHash(f"h{n}-{path}"),
            )
            for n, text in enumerate(texts)
        ]
        store.replace_file(
            IndexedFile(source, path, ContentHash(path), 1.0, 1),
            chunks,
            [None] * len(chunks),
            "fts-only",
        )


@pytest.fixture
def stores(tmp_path: Path, pg_database: str) -> Iterator[tuple[IndexStore, IndexStore]]:
    sqlite = SqliteIndexStore.open(tmp_path / "index.db")
    pg = PostgresIndexStore(PostgresDatabase.open(pg_database), unique_agent())
    fill(sqlite)
    fill(pg)
    yield sqlite, pg
    sqlite.close()
    pg.close()


def ranking(store: IndexStore, match: str, sources: tuple[Source, ...]) -> list[tuple[str, float]]:
    return [(c.chunk_id, c.score) for c in store.search_keyword(match, sources=sources, limit=50)]


def assert_same(got: list[tuple[str, float]], expected: list[tuple[str, float]]) -> None:
    assert [c for c, _ in got] == [c for c, _ in expected]
    assert [s for _, s in got] == pytest.approx([s for _, s in expected], rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("query", QUERIES)
def test_same_order_and_ranks_as_sqlite(stores: tuple[IndexStore, IndexStore], query: str) -> None:
    sqlite, pg = stores
    match = build_fts_query(query)
    assert match is not None

    expected = ranking(sqlite, match, ALL_SOURCES)
    got = ranking(pg, match, ALL_SOURCES)

    assert expected, "the corpus should answer every query"
    assert_same(got, expected)


def test_a_source_filter_keeps_the_same_ranks(stores: tuple[IndexStore, IndexStore]) -> None:
    """Statistics are the agent's whole index in both stores, whatever the source filter."""
    sqlite, pg = stores
    match = build_fts_query("회의 会議 deployment")
    assert match is not None

    for sources in (("memory",), ("sessions",)):
        assert_same(ranking(pg, match, sources), ranking(sqlite, match, sources))


def test_a_phrase_of_several_tokens_counts_consecutive_tokens(
    stores: tuple[IndexStore, IndexStore],
) -> None:
    """A quoted multi-word phrase matches where its words stand together, as in FTS5."""
    sqlite, pg = stores

    for match in ('"database migrations"', '"the user" OR "dark mode"', '"migrations now"'):
        expected = ranking(sqlite, match, ALL_SOURCES)
        assert expected
        assert_same(ranking(pg, match, ALL_SOURCES), expected)


def test_a_small_limit_keeps_the_head_of_the_full_ranking(
    stores: tuple[IndexStore, IndexStore],
) -> None:
    sqlite, pg = stores
    match = build_fts_query("database migrations deployment 数据库")
    assert match is not None

    full = ranking(sqlite, match, ALL_SOURCES)
    for limit in (1, 2, 3):
        hits = pg.search_keyword(match, sources=ALL_SOURCES, limit=limit)
        assert_same([(c.chunk_id, c.score) for c in hits], full[:limit])
