"""Integration: the PostgreSQL schema migrates from every historical version upward."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import create_engine

from memlane.adapters.postgres import migrations
from memlane.adapters.postgres.database import PostgresDatabase
from memlane.adapters.postgres.postgres_index_store import PostgresIndexStore
from memlane.application.ports.index_store import StoreError, VectorProgress
from tests.pg_server import fresh_database

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

TABLES = {
    "memlane_schema",
    "memlane_agents",
    "memlane_meta",
    "memlane_files",
    "memlane_chunks",
    "memlane_postings",
    "memlane_embedding_cache",
    "memlane_events",
    "memlane_tracking",
    "memlane_keyword_stats",
}


def tables(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.exec_driver_sql(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
            ).all()
    finally:
        engine.dispose()
    return {str(r[0]) for r in rows}


def migrate_to(url: str, version: int) -> None:
    """Build the schema as memlane of `version` left it."""
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            migrations.migrate(conn, migrations.MIGRATIONS[:version])
    finally:
        engine.dispose()


@pytest.mark.parametrize("version", range(len(migrations.MIGRATIONS)))
def test_every_version_upgrades_to_the_current_schema(pg_url: str, version: int) -> None:
    """A database at `version` opens, is migrated, and reports the current version."""
    url = fresh_database(pg_url)
    migrate_to(url, version)

    db = PostgresDatabase.open(url)
    try:
        with db.read() as conn:
            assert migrations.schema_version(conn) == len(migrations.MIGRATIONS)
    finally:
        db.close()
    assert tables(url) >= TABLES


def test_every_primary_key_leads_with_the_agent(pg_url: str) -> None:
    """Each agent table is keyed by agent first, so it can be distributed by agent id."""
    url = fresh_database(pg_url)
    PostgresDatabase.open(url).close()
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.exec_driver_sql(
                "SELECT c.relname, a.attname FROM pg_index i "
                "JOIN pg_class c ON c.oid = i.indrelid "
                "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = i.indkey[0] "
                "WHERE i.indisprimary AND c.relname LIKE 'memlane_%%'"
            ).all()
    finally:
        engine.dispose()
    leading = {str(table): str(column) for table, column in rows}
    assert {t for t in TABLES if t != "memlane_schema"} <= set(leading)
    assert {leading[t] for t in TABLES if t != "memlane_schema"} == {"agent"}


def test_reopening_applies_nothing(pg_url: str) -> None:
    url = fresh_database(pg_url)
    PostgresDatabase.open(url).close()
    db = PostgresDatabase.open(url)
    try:
        assert db.write(migrations.migrate) == []
    finally:
        db.close()


def test_a_newer_schema_is_refused(pg_url: str) -> None:
    """A database migrated by a newer memlane is not touched."""
    url = fresh_database(pg_url)
    PostgresDatabase.open(url).close()
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql("UPDATE memlane_schema SET version = version + 1")
    engine.dispose()

    with pytest.raises(StoreError, match="newer"):
        PostgresDatabase.open(url)


def test_hosts_opening_an_empty_database_at_once_both_succeed(pg_url: str) -> None:
    """The advisory lock serialises concurrent first migrations."""
    url = fresh_database(pg_url)
    errors: list[BaseException] = []

    def open_once() -> None:
        try:
            PostgresDatabase.open(url).close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_once) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert errors == []
    assert tables(url) >= TABLES


def test_the_password_never_appears_in_location_or_errors(pg_url: str) -> None:
    """A URL's password is masked in location() and in connection errors."""
    bad = "postgresql://memlane:s3cret@127.0.0.1:1/nowhere?connect_timeout=2"

    with pytest.raises(StoreError) as caught:
        PostgresDatabase.open(bad)

    assert "s3cret" not in str(caught.value)
    assert "***" in str(caught.value)
    assert "s3cret" not in PostgresDatabase(bad).location


def test_version_4_dates_a_populated_index_without_touching_its_vectors(pg_url: str) -> None:
    """Chunks written at version 3 get their time range from what the store holds; vectors,
    postings and models stay byte for byte; the time filter then answers."""
    url = fresh_database(pg_url)
    migrate_to(url, 3)
    engine = create_engine(url)
    files = [
        ("memory/2026-11-17.md", "memory", 5_000.0, None),
        ("memory/2026-02-30.md", "memory", 6_000.0, None),
        ("notes/plan.md", "memory", 7_000.0, None),
        ("s1.jsonl", "sessions", 8_000.0, 1_790_000_000.0),
    ]
    try:
        with engine.begin() as conn:
            for rid, (path, source, mtime, stamp) in enumerate(files, start=1):
                conn.exec_driver_sql(
                    "INSERT INTO memlane_files(agent, source, path, hash, mtime, size) "
                    "VALUES ('a', %s, %s, 'h', %s, 1)",
                    (source, path, mtime),
                )
                conn.exec_driver_sql(
                    "INSERT INTO memlane_chunks(agent, rid, id, source, path, start_line, "
                    "end_line, hash, text, model, embedding, dims, timestamp, updated_at, "
                    "doc_len) VALUES ('a', %s, %s, %s, %s, 1, 1, 'h', 'apples', 'm', "
                    "%s::vector, 4, %s, 1.0, 1)",
                    (rid, f"c{rid}", source, path, f"[{rid},0,0,1]", stamp),
                )
            before = conn.exec_driver_sql(
                "SELECT rid, embedding::text, model FROM memlane_chunks ORDER BY rid"
            ).all()
    finally:
        engine.dispose()

    PostgresDatabase.open(url).close()

    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            times = conn.exec_driver_sql(
                "SELECT rid, time_start, time_end FROM memlane_chunks ORDER BY rid"
            ).all()
            after = conn.exec_driver_sql(
                "SELECT rid, embedding::text, model FROM memlane_chunks ORDER BY rid"
            ).all()
            indexes = conn.exec_driver_sql(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'memlane_chunks'"
            ).all()
    finally:
        engine.dispose()
    day = 1_794_873_600.0  # 2026-11-17T00:00:00Z
    assert [tuple(r) for r in times] == [
        (1, day, day + 86_399),
        (2, 6_000.0, 6_000.0),
        (3, 7_000.0, 7_000.0),
        (4, 1_790_000_000.0, 1_790_000_000.0),
    ]
    assert after == before
    assert "memlane_chunks_time" in {str(r[0]) for r in indexes}


def test_version_5_indexes_each_agents_longest_span(pg_url: str) -> None:
    """Chunks written at version 4 keep their rows; an agent's longest span, which bounds a
    window's walk, is then read from the new index (its largest entry, not the agent's rows)."""
    url = fresh_database(pg_url)
    migrate_to(url, 4)
    engine = create_engine(url)
    # Agent a: 2,000 one-hour chunks and one over 30 days; agent b: one-day chunks only.
    rows = [("a", rid, rid * 3_600.0, rid * 3_600.0 + 3_600) for rid in range(1, 2_001)]
    rows.append(("a", 2_001, 0.0, 30 * 86_400.0))
    rows += [("b", rid, rid * 86_400.0, rid * 86_400.0 + 86_399) for rid in range(1, 501)]
    read = "SELECT agent, rid, embedding::text, time_start, time_end FROM memlane_chunks"
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql(
                "INSERT INTO memlane_chunks(agent, rid, id, source, path, start_line, end_line, "
                "hash, text, model, embedding, dims, timestamp, updated_at, doc_len, "
                "time_start, time_end) SELECT u.a, u.r, u.a || u.r, 'memory', 'm.md', 1, 1, "
                "'h', 'apples', 'm', '[1,0,0,1]'::vector, 4, NULL, 1.0, 1, u.s, u.e "
                "FROM unnest(%s::text[], %s::bigint[], %s::float8[], %s::float8[]) "
                "AS u(a, r, s, e)",
                tuple(list(column) for column in zip(*rows, strict=True)),
            )
            before = conn.exec_driver_sql(read + " ORDER BY agent, rid").all()
    finally:
        engine.dispose()

    PostgresDatabase.open(url).close()

    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            after = conn.exec_driver_sql(read + " ORDER BY agent, rid").all()
            conn.exec_driver_sql("ANALYZE memlane_chunks")
            longest = "SELECT max(time_end - time_start) FROM memlane_chunks WHERE agent = %s"
            spans = [conn.exec_driver_sql(longest, (a,)).scalar_one() for a in ("a", "b", "c")]
            plan = "\n".join(
                str(r[0])
                for r in conn.exec_driver_sql(
                    "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) " + longest, ("a",)
                )
            )
    finally:
        engine.dispose()
    assert after == before
    assert spans == [30 * 86_400.0, 86_399.0, None]
    # The largest entry of the agent's part of the index, then its one row (PostgreSQL reads
    # an expression index's rows from the heap): 3 buffers here, not the agent's 2,001 rows.
    assert "Index Scan Backward using memlane_chunks_span" in plan
    assert "Seq Scan" not in plan and "Sort" not in plan


def test_version_6_gives_chunks_an_empty_heading_trail(pg_url: str) -> None:
    """Chunks written at version 5 keep their rows and read back with context "" (their index's
    older chunker version has them rebuilt at the next sync, which writes the trails)."""
    url = fresh_database(pg_url)
    migrate_to(url, 5)
    engine = create_engine(url)
    read = "SELECT agent, rid, hash, text, embedding::text FROM memlane_chunks ORDER BY rid"
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql(
                "INSERT INTO memlane_chunks(agent, rid, id, source, path, start_line, end_line, "
                "hash, text, model, embedding, dims, timestamp, updated_at, doc_len, "
                "time_start, time_end) SELECT 'a', r, 'c' || r, 'memory', 'm.md', r, r, "
                "'h' || r, 'apples', 'm', '[1,0,0,1]'::vector, 4, NULL, 1.0, 1, 1.0, 1.0 "
                "FROM generate_series(1, 3) AS r"
            )
            before = conn.exec_driver_sql(read).all()
    finally:
        engine.dispose()

    PostgresDatabase.open(url).close()

    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            after = conn.exec_driver_sql(read).all()
            contexts = conn.exec_driver_sql("SELECT context FROM memlane_chunks").scalars().all()
    finally:
        engine.dispose()
    assert after == before
    assert contexts == ["", "", ""]


def test_version_8_keeps_vectors_and_reads_no_older_note_as_its_state(pg_url: str) -> None:
    """An index written at version 7 keeps its rows, and its counts are right at once. Its
    piece backlog "none", written when the agent held no vector (state "<generation>/0") and
    left stale by vectors set in place since, is not read as the new state ("<generation>/v0"):
    the chunks that gained a vector are found lacking pieces."""
    url = fresh_database(pg_url)
    migrate_to(url, 7)
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql(
                "INSERT INTO memlane_keyword_stats(agent, rows, tokens, generation) "
                "VALUES ('a', 2, 2, 7)"
            )
            conn.exec_driver_sql("INSERT INTO memlane_meta VALUES ('a', 'vector_dims', '4')")
            conn.exec_driver_sql(
                "INSERT INTO memlane_meta VALUES ('a', 'pieces_complete:m', '7/0')"
            )
            for rid in (1, 2):
                conn.exec_driver_sql(
                    "INSERT INTO memlane_chunks(agent, rid, id, source, path, start_line, "
                    "end_line, hash, text, model, embedding, dims, updated_at, doc_len) "
                    "VALUES ('a', %s, %s, 'memory', 'MEMORY.md', 1, 1, 'h', 'apples', 'm', "
                    "%s::vector, 4, 1.0, 1)",
                    (rid, f"c{rid}", f"[{rid},0,0,1]"),
                )
    finally:
        engine.dispose()

    db = PostgresDatabase.open(url)
    store = PostgresIndexStore(db, "a")
    try:
        assert store.vector_progress("m") == VectorProgress(done=2, total=2)
        assert store.pieces_owed("m", 65) == 2
    finally:
        store.close()
        db.close()
