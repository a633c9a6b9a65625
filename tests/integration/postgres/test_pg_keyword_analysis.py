"""Integration: postings made by an older text analysis are made again, once, before use.

An agent indexed before the Japanese word terms existed holds bigram-only postings; after the
upgrade its first store analyses every chunk again, so its keyword leg ranks exactly as an agent
indexed from scratch (and as SQLite, which rebuilds its FTS5 table the same way).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Connection
from structlog.testing import capture_logs

from memlane.adapters.postgres import keyword_analysis
from memlane.adapters.postgres.database import PostgresDatabase
from memlane.adapters.postgres.postgres_index_store import PostgresIndexStore
from memlane.application.ports.index_store import IndexedFile
from memlane.domain.chunks import Chunk, ChunkId, ContentHash
from memlane.domain.japanese_words import WORD_MARK
from memlane.domain.keywords import build_fts_query
from memlane.domain.sources import ALL_SOURCES
from tests.pg_server import unique_agent

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

TEXTS = [
    "ワタワーズとワタワーズの話をした",
    "タワーの話をしたけれども",
    "今日は会議があった",
    "The deploy runs at noon",
]


def fill(store: PostgresIndexStore) -> None:
    chunks = [
        Chunk(
            id=ChunkId(f"memory:memory/ja.md:{n}"),
            source="memory",
            path="memory/ja.md",
            start_line=n + 1,
            end_line=n + 1,
            text=text,
            hash=ContentHash(f"h{n}"),
        )
        for n, text in enumerate(TEXTS)
    ]
    store.replace_file(
        IndexedFile("memory", "memory/ja.md", ContentHash("f"), 1.0, 1),
        chunks,
        [None] * len(chunks),
        "fts-only",
    )


def age(db: PostgresDatabase, agent: str) -> None:
    """Make the agent's rows look as version 1 of the analysis left them: no word terms, the
    shorter lengths, the old totals, and the old record."""

    def work(conn: Connection) -> None:
        conn.exec_driver_sql(
            "DELETE FROM memlane_postings WHERE agent = %s AND term LIKE %s",
            (agent, WORD_MARK + "%"),
        )
        conn.exec_driver_sql(
            "UPDATE memlane_chunks c SET doc_len = (SELECT count(*) FROM memlane_postings p, "
            "unnest(p.positions) WHERE p.agent = c.agent AND p.rid = c.rid) WHERE agent = %s",
            (agent,),
        )
        conn.exec_driver_sql(
            "UPDATE memlane_postings p SET doc_len = c.doc_len FROM memlane_chunks c "
            "WHERE p.agent = %s AND c.agent = p.agent AND c.rid = p.rid",
            (agent,),
        )
        conn.exec_driver_sql(
            "UPDATE memlane_keyword_stats SET tokens = (SELECT sum(doc_len) FROM memlane_chunks "
            "WHERE agent = %s) WHERE agent = %s",
            (agent, agent),
        )
        conn.exec_driver_sql(
            "UPDATE memlane_meta SET value = %s WHERE agent = %s AND key = %s",
            (
                "1|" + keyword_analysis.current().split("|", 1)[1],
                agent,
                keyword_analysis.ANALYSIS_KEY,
            ),
        )

    db.write(work)


def snapshot(db: PostgresDatabase, agent: str) -> tuple[object, ...]:
    with db.read() as conn:
        postings = conn.exec_driver_sql(
            "SELECT c.id, p.term, p.tf, p.positions, p.doc_len FROM memlane_postings p "
            "JOIN memlane_chunks c ON c.agent = p.agent AND c.rid = p.rid WHERE p.agent = %s "
            "ORDER BY 1, 2",
            (agent,),
        ).all()
        lengths = conn.exec_driver_sql(
            "SELECT id, doc_len FROM memlane_chunks WHERE agent = %s ORDER BY id", (agent,)
        ).all()
        stats = conn.exec_driver_sql(
            "SELECT rows, tokens FROM memlane_keyword_stats WHERE agent = %s", (agent,)
        ).one()
    return tuple(postings), tuple(lengths), tuple(stats)


def ranking(store: PostgresIndexStore, query: str) -> list[tuple[str, float]]:
    match = build_fts_query(query)
    assert match is not None
    return [
        (c.chunk_id, c.score) for c in store.search_keyword(match, sources=ALL_SOURCES, limit=9)
    ]


def open_store(url: str, agent: str) -> PostgresIndexStore:
    """A store on a database of its own (closing a store closes its database)."""
    return PostgresIndexStore(PostgresDatabase.open(url), agent)


@pytest.fixture
def db(pg_database: str) -> Iterator[PostgresDatabase]:
    database = PostgresDatabase.open(pg_database)
    yield database
    database.close()


def test_an_aged_agent_is_analysed_again_to_what_a_fresh_one_holds(
    db: PostgresDatabase, pg_database: str
) -> None:
    fresh, aged = unique_agent(), unique_agent()
    for agent in (fresh, aged):
        store = open_store(pg_database, agent)
        fill(store)
        store.close()
    age(db, aged)
    assert snapshot(db, aged) != snapshot(db, fresh)

    with capture_logs() as logs:
        upgraded = open_store(pg_database, aged)
        got = ranking(upgraded, "タワーはどこ")

    reference = open_store(pg_database, fresh)
    assert got == ranking(reference, "タワーはどこ")
    assert got[0][0] == "memory:memory/ja.md:1"  # the whole word first, as in SQLite
    assert snapshot(db, aged) == snapshot(db, fresh)
    said = [e["event"] for e in logs if e["event"].startswith("keyword_postings_reanalys")]
    assert said == ["keyword_postings_reanalysing", "keyword_postings_reanalysed"]
    assert [e["chunks"] for e in logs if e["event"] == "keyword_postings_reanalysed"] == [4]
    upgraded.close()
    reference.close()


def test_a_current_agent_is_left_alone(db: PostgresDatabase, pg_database: str) -> None:
    agent = unique_agent()
    store = open_store(pg_database, agent)
    fill(store)
    store.close()

    with capture_logs() as logs:
        again = open_store(pg_database, agent)
        ranking(again, "会議")
    again.close()

    assert not [e for e in logs if e["event"] == "keyword_postings_reanalysed"]
    assert keyword_analysis.is_current(db, agent)


def test_an_agent_indexed_before_the_record_existed_is_analysed_again(
    db: PostgresDatabase, pg_database: str
) -> None:
    agent = unique_agent()
    store = open_store(pg_database, agent)
    fill(store)
    store.close()
    db.write(
        lambda conn: conn.exec_driver_sql(
            "DELETE FROM memlane_meta WHERE agent = %s AND key = %s",
            (agent, keyword_analysis.ANALYSIS_KEY),
        )
    )

    with capture_logs() as logs:
        again = open_store(pg_database, agent)
        ranking(again, "会議")
    again.close()

    assert [e["was"] for e in logs if e["event"] == "keyword_postings_reanalysed"] == ["unrecorded"]
