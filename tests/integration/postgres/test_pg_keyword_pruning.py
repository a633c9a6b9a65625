"""Integration: the PostgreSQL keyword leg's pruned top-k equals the full ranking, bit for bit.

The pruned path (MaxScore over the postings, the per-agent keyword statistics, the cached
document frequencies) is compared with the unpruned reference (`keyword_pruning=False`, every
statistic counted from the rows, every matching row ranked) and with SQLite FTS5's bm25() on
random corpora: common and rare words, CJK text (bigrams), two sources, repeated and absent
query terms, many tied rows, every limit from 1 up, and after writes that change the
statistics. Ranks must be equal as floats and ties ordered alike.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Connection, create_engine

from memlane.adapters.postgres import keyword_pruned, keyword_search, migrations, rows
from memlane.adapters.postgres.analysis import Fts5Analyser
from memlane.adapters.postgres.database import PostgresDatabase
from memlane.adapters.postgres.postgres_index_store import PostgresIndexStore
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.application.ports.index_store import IndexedFile, IndexStore, IndexWriter
from memlane.domain.chunks import Chunk, ChunkId, ContentHash
from memlane.domain.keywords import build_fts_query
from memlane.domain.sources import ALL_SOURCES, Source
from tests.pg_server import fresh_database, unique_agent

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

WORDS = [f"w{i}" for i in range(120)]
CJK = "部署方案数据库迁移会议资料缓存"
SOURCE_FILTERS: list[tuple[Source, ...]] = [ALL_SOURCES, ("memory",), ("sessions",)]
LIMITS = (1, 2, 3, 5, 10, 40)


def random_texts(rng: random.Random, n: int) -> list[str]:
    """Chunks of Zipf-drawn words (w0 in most of them, w100+ in few), some with CJK runs, and
    a few exact duplicates (tied scores)."""
    weights = [1.0 / (i + 1) for i in range(len(WORDS))]
    texts: list[str] = []
    for _ in range(n):
        if texts and rng.random() < 0.1:
            texts.append(rng.choice(texts))
            continue
        words = rng.choices(WORDS, weights, k=rng.randint(3, 30))
        if rng.random() < 0.3:
            words.append("".join(rng.choices(CJK, k=rng.randint(2, 6))))
        texts.append(" ".join(words))
    return texts


def random_queries(rng: random.Random, n: int) -> list[str]:
    queries = []
    for _ in range(n):
        words = [rng.choice(WORDS[:5])] if rng.random() < 0.7 else []
        words += rng.sample(WORDS, rng.randint(0, 4))
        if rng.random() < 0.2:
            words.append(words[0] if words else "w1")  # a repeated term
        if rng.random() < 0.3:
            words.append("".join(rng.choices(CJK, k=rng.randint(2, 4))))
        if rng.random() < 0.1:
            words.append("absentword")
        queries.append(" ".join(words) or "w0")
    return queries


def fill(store: IndexWriter, texts: list[str], per_file: int = 7) -> None:
    for start in range(0, len(texts), per_file):
        number = start // per_file
        source: Source = "sessions" if number % 3 == 0 else "memory"
        path = f"{source}/f{number}.md"
        chunks = [
            Chunk(
                ChunkId(f"{source}:{path}:{i}"),
                source,
                path,
                i + 1,
                i + 1,
                text,
                ContentHash(f"{path}:{i}:{text}"),
            )
            for i, text in enumerate(texts[start : start + per_file])
        ]
        store.replace_file(
            IndexedFile(source, path, ContentHash(path), 1.0, 1), chunks, [None] * len(chunks), "m"
        )


def counted(conn: Connection, agent: str) -> tuple[int, int]:
    """The agent's rows and token total, counted from its chunks."""
    n, total = conn.exec_driver_sql(
        "SELECT count(*), coalesce(sum(doc_len), 0) FROM memlane_chunks WHERE agent = %s",
        (agent,),
    ).one()
    return int(n), int(total)


def ranking(
    store: IndexStore, match: str, sources: tuple[Source, ...], limit: int
) -> list[tuple[str, float]]:
    return [
        (c.chunk_id, c.score) for c in store.search_keyword(match, sources=sources, limit=limit)
    ]


@pytest.fixture
def pg_pair(pg_database: str) -> Iterator[tuple[PostgresIndexStore, PostgresIndexStore]]:
    """The same agent through the pruned store and the unpruned reference."""
    db = PostgresDatabase.open(pg_database)
    agent = unique_agent()
    pruned = PostgresIndexStore(db, agent)
    reference = PostgresIndexStore(db, agent, keyword_pruning=False)
    yield pruned, reference
    pruned.close()
    reference.close()


def assert_pruned_equals_reference(
    pruned: PostgresIndexStore, reference: PostgresIndexStore, queries: list[str]
) -> set[str]:
    """Every query x source filter x limit: identical lists and ranks; return the plans seen."""
    plans: set[str] = set()
    for query in queries:
        match = build_fts_query(query)
        assert match is not None
        for sources in SOURCE_FILTERS:
            full = ranking(reference, match, sources, max(LIMITS))
            for limit in LIMITS:
                got = ranking(pruned, match, sources, limit)
                plans.add(pruned.last_keyword_plan)
                assert got == full[:limit], (query, sources, limit, pruned.last_keyword_plan)
    return plans


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pruned_equals_the_full_ranking_on_random_corpora(
    pg_pair: tuple[PostgresIndexStore, PostgresIndexStore], seed: int
) -> None:
    pruned, reference = pg_pair
    rng = random.Random(seed)
    fill(pruned, random_texts(rng, 240))

    plans = assert_pruned_equals_reference(pruned, reference, random_queries(rng, 25))

    assert keyword_search.PRUNED in plans, "the pruned path should have answered some queries"


def test_pruned_equals_sqlite_fts5_on_a_random_corpus(tmp_path: Path, pg_database: str) -> None:
    rng = random.Random(7)
    texts = random_texts(rng, 300)
    sqlite = SqliteIndexStore.open(tmp_path / "index.db")
    pg = PostgresIndexStore(PostgresDatabase.open(pg_database), unique_agent())
    try:
        fill(sqlite, texts)
        fill(pg, texts)
        for query in random_queries(rng, 30):
            match = build_fts_query(query)
            assert match is not None
            for sources in SOURCE_FILTERS:
                for limit in (1, 4, 10, 50):
                    expected = ranking(sqlite, match, sources, limit)
                    assert ranking(pg, match, sources, limit) == expected, (query, sources, limit)
    finally:
        sqlite.close()
        pg.close()


def test_ties_at_the_cut_are_ordered_by_insertion(
    pg_pair: tuple[PostgresIndexStore, PostgresIndexStore],
) -> None:
    """Forty identical rows score alike: every limit keeps the earliest written, as FTS5 does."""
    pruned, reference = pg_pair
    texts = ["alpha beta gamma"] * 40 + ["alpha delta"] * 10 + ["beta beta epsilon"] * 10
    fill(pruned, texts, per_file=5)

    plans = assert_pruned_equals_reference(
        pruned, reference, ["alpha", "beta", "alpha beta", "epsilon alpha", "gamma delta"]
    )

    assert keyword_search.PRUNED in plans
    top = ranking(pruned, '"gamma"', ALL_SOURCES, 3)
    assert len({score for _, score in top}) == 1
    assert [c for c, _ in top] == [c for c, _ in ranking(reference, '"gamma"', ALL_SOURCES, 40)][:3]


def test_writes_renew_the_statistics_and_the_cached_counts(
    pg_pair: tuple[PostgresIndexStore, PostgresIndexStore],
) -> None:
    """After replacing and deleting files, N, avgdl and the rows per term follow at once."""
    pruned, reference = pg_pair
    rng = random.Random(11)
    fill(pruned, random_texts(rng, 140))
    queries = random_queries(rng, 12)
    assert_pruned_equals_reference(pruned, reference, queries)  # warms the cache

    fill(pruned, random_texts(rng, 70))  # replaces the first ten files
    pruned.delete_file("memory", "memory/f1.md")
    pruned.delete_file("sessions", "sessions/f3.md")

    assert_pruned_equals_reference(pruned, reference, queries)
    with pruned.database.read() as conn:
        assert rows.keyword_stats(conn, pruned.agent)[:2] == (counted(conn, pruned.agent))


def test_a_rebuild_swaps_the_statistics_with_the_rows(
    pg_pair: tuple[PostgresIndexStore, PostgresIndexStore],
) -> None:
    pruned, reference = pg_pair
    rng = random.Random(5)
    fill(pruned, random_texts(rng, 100))
    queries = random_queries(rng, 8)
    assert_pruned_equals_reference(pruned, reference, queries)

    rebuild = pruned.begin_rebuild()
    fill(rebuild, random_texts(rng, 60))
    rebuild.commit()

    assert_pruned_equals_reference(pruned, reference, queries)
    with pruned.database.read() as conn:
        stats = rows.keyword_stats(conn, pruned.agent)
        assert stats[:2] == counted(conn, pruned.agent)
        assert stats[0] == 60


def test_too_many_candidates_fall_back_to_the_full_ranking(
    pg_pair: tuple[PostgresIndexStore, PostgresIndexStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    pruned, reference = pg_pair
    rng = random.Random(3)
    fill(pruned, random_texts(rng, 120))
    monkeypatch.setattr(keyword_pruned, "MAX_CANDIDATES", 5)

    plans = assert_pruned_equals_reference(pruned, reference, ["w0 w1 w2", "w1 w3 w4 w5"])

    assert keyword_search.FULL in plans


def test_a_version_2_database_with_rows_migrates_and_ranks_alike(pg_url: str) -> None:
    """Rows written by schema 2 (postings without length and source) are back-filled."""
    url = fresh_database(pg_url)
    engine = create_engine(url)
    texts = random_texts(random.Random(9), 60)
    analyser = Fts5Analyser()
    try:
        with engine.begin() as conn:
            migrations.migrate(conn, migrations.MIGRATIONS[:2])
            for n, (text, tokens) in enumerate(
                zip(texts, analyser.document_tokens(texts), strict=True)
            ):
                source = "sessions" if n % 4 == 0 else "memory"
                rid = conn.exec_driver_sql(
                    "INSERT INTO memlane_chunks(agent, id, source, path, start_line, end_line, "
                    "hash, text, model, updated_at, doc_len) VALUES ('old', %s, %s, %s, 1, 1, "
                    "'h', %s, 'fts-only', 0, %s) RETURNING rid",
                    (f"c{n}", source, f"{source}/f{n}.md", text, len(tokens)),
                ).scalar_one()
                for term in dict.fromkeys(tokens):
                    at = [i for i, t in enumerate(tokens) if t == term]
                    conn.exec_driver_sql(
                        "INSERT INTO memlane_postings(agent, term, rid, tf, positions) "
                        "VALUES ('old', %s, %s, %s, %s)",
                        (term, rid, len(at), at),
                    )
    finally:
        engine.dispose()
        analyser.close()

    db = PostgresDatabase.open(url)
    pruned = PostgresIndexStore(db, "old")
    reference = PostgresIndexStore(db, "old", keyword_pruning=False)
    try:
        with db.read() as conn:
            assert migrations.schema_version(conn) == len(migrations.MIGRATIONS)
            stats = rows.keyword_stats(conn, "old")
            assert stats[:2] == counted(conn, "old")
            assert stats[0] == len(texts)
        plans = assert_pruned_equals_reference(
            pruned, reference, random_queries(random.Random(10), 10)
        )
        assert keyword_search.PRUNED in plans
    finally:
        pruned.close()
        reference.close()
