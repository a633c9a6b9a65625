"""Integration: the PostgreSQL schema migrates from every historical version upward."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import create_engine

from memlane.adapters.postgres import migrations
from memlane.adapters.postgres.database import PostgresDatabase
from memlane.application.ports.index_store import StoreError
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
