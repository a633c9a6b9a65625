"""Integration: `store copy --all-agents` that fails part-way leaves nothing of its run behind.

Before, the agents copied before the failure stayed in the target and a rerun refused them
(`already has an index`): a half-copied target to sort out by hand. Now they are removed again,
in both directions; when that removal fails too, the error names them and how to remove them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from memlane.adapters.postgres.database import PostgresDatabase
from memlane.adapters.postgres.transfer import AGENT_TABLES, PostgresIndexTransfer
from memlane.adapters.store.database import SqliteDatabase
from memlane.adapters.store.transfer import SqliteIndexTransfer
from memlane.application.store_copy import copy_index
from tests.integration.postgres.test_pg_store_copy import seed
from tests.pg_server import fresh_database

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

AGENTS = ("main", "ops", "zeta")  # copied in this order: zeta, the last, fails
COPIED = "1 file(s), 4 chunk(s), 3 vector(s), 2 cached, 2 event(s) copied and verified"
FAIL_ZETA = (
    "CREATE FUNCTION fail() RETURNS trigger LANGUAGE plpgsql AS "
    "$$ BEGIN RAISE EXCEPTION 'disk quota exceeded'; END $$",
    "CREATE TRIGGER fail_zeta BEFORE INSERT ON memlane_events FOR EACH ROW "
    "WHEN (NEW.agent = 'zeta') EXECUTE FUNCTION fail()",
)


def sql(url: str, *statements: str) -> None:
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            for statement in statements:
                conn.exec_driver_sql(statement)
    finally:
        engine.dispose()


def agent_rows(url: str) -> dict[str, int]:
    """Rows per agent in every table of the schema with an `agent` column."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            tables = [
                str(t)
                for (t,) in conn.exec_driver_sql(
                    "SELECT table_name FROM information_schema.columns WHERE column_name = "
                    "'agent' AND starts_with(table_name, 'memlane_') AND table_schema = current_schema()"
                )
            ]
            found: dict[str, int] = {}
            for table in tables:
                for agent, n in conn.exec_driver_sql(
                    f"SELECT agent, count(*) FROM {table} GROUP BY agent"
                ):
                    found[str(agent)] = found.get(str(agent), 0) + int(n)
            return found
    finally:
        engine.dispose()


def sqlite_state(root: Path) -> Path:
    for agent in AGENTS:
        (root / "agents" / agent).mkdir(parents=True)
        db = SqliteDatabase.open(root / "agents" / agent / "memory.db")
        seed(db)
        db.close()
    return root


def copy(
    tmp_path: Path, target: str, *prefix: str, url: str = ""
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env["HOME"] = str(tmp_path)
    if url:
        env["MEMLANE_STORE_URL"] = url
    return subprocess.run(
        [sys.executable, "-m", "memlane.entrypoints", "--workspace", str(tmp_path), *prefix,
         "store", "copy", "--to", target, "--all-agents"],
        capture_output=True, text=True, env=env, timeout=180, check=False,
    )  # fmt: skip


@pytest.fixture
def target(tmp_path: Path, pg_url: str) -> str:
    """A database holding agent `keep` (there before the copy: never touched) and whose inserts
    of zeta's events fail, as a full disk would."""
    url = fresh_database(pg_url)
    keep = SqliteDatabase.open(tmp_path / "keep.db")
    seed(keep)
    db = PostgresDatabase.open(url)  # creates the schema
    try:
        copy_index(SqliteIndexTransfer(keep), PostgresIndexTransfer(db, "keep"))
    finally:
        db.close()
        keep.close()
    sql(url, *FAIL_ZETA)
    return url


def test_a_failed_copy_to_postgres_removes_what_it_wrote(tmp_path: Path, target: str) -> None:
    state = sqlite_state(tmp_path / "state")
    keep_before = agent_rows(target)["keep"]

    failed = copy(tmp_path, target, "--state-dir", str(state))
    left = agent_rows(target)
    sql(target, "DROP TRIGGER fail_zeta ON memlane_events")
    rerun = copy(tmp_path, target, "--state-dir", str(state))

    assert failed.returncode == 1
    assert left == {"keep": keep_before}  # nothing of main, ops or zeta; keep untouched
    assert "copying zeta failed" in failed.stderr
    assert "disk quota exceeded" in failed.stderr
    assert "what this run wrote (main, ops, zeta) was removed" in failed.stderr
    assert rerun.returncode == 0, rerun.stderr
    assert rerun.stdout.splitlines() == [f"{a}: {COPIED}" for a in AGENTS]


def test_the_removal_table_list_covers_every_agent_table(target: str) -> None:
    engine = create_engine(target)
    try:
        with engine.connect() as conn:
            tables = {
                str(t)
                for (t,) in conn.exec_driver_sql(
                    "SELECT table_name FROM information_schema.columns WHERE column_name = "
                    "'agent' AND starts_with(table_name, 'memlane_') AND table_schema = current_schema()"
                )
            }
    finally:
        engine.dispose()
    assert tables == set(AGENT_TABLES)


def test_a_removal_that_fails_names_the_agents_left_and_how(tmp_path: Path, target: str) -> None:
    state = sqlite_state(tmp_path / "state")
    sql(
        target,
        "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS "
        "$$ BEGIN RAISE EXCEPTION 'permission denied'; END $$",
        "CREATE TRIGGER refuse BEFORE DELETE ON memlane_agents FOR EACH ROW "
        "EXECUTE FUNCTION refuse()",
    )

    failed = copy(tmp_path, target, "--state-dir", str(state))
    left = agent_rows(target)

    assert failed.returncode == 1
    message = " ".join(failed.stderr.split())  # one line, whatever the server's error holds
    assert "copying zeta failed" in message
    assert "main, ops are left in the target" in message
    assert {"main", "ops", "keep"} <= set(left) and "zeta" not in left
    # The instructions given are exact: run as said, they clear the way for a rerun.
    sql(target, "DROP TRIGGER refuse ON memlane_agents", "DROP TRIGGER fail_zeta ON memlane_events")
    for agent in ("main", "ops"):
        hint = message.split(f"{agent} (")[1].split(": run in ", 1)[1].split(": ", 1)[1]
        sql(target, hint[: hint.index("COMMIT;") + len("COMMIT;")])
    assert set(agent_rows(target)) == {"keep"}
    rerun = copy(tmp_path, target, "--state-dir", str(state))
    assert rerun.returncode == 0, rerun.stderr


def test_a_failed_copy_to_sqlite_removes_what_it_wrote(tmp_path: Path, pg_url: str) -> None:
    """PostgreSQL -> SQLite: zeta's cache cannot be decoded, half-way through its load."""
    url = fresh_database(pg_url)
    pg = PostgresDatabase.open(url)
    (tmp_path / "src").mkdir()
    try:
        for agent in AGENTS:
            db = SqliteDatabase.open(tmp_path / "src" / f"{agent}.db")
            seed(db)
            copy_index(SqliteIndexTransfer(db), PostgresIndexTransfer(pg, agent))
            db.close()
    finally:
        pg.close()
    sql(url, "UPDATE memlane_embedding_cache SET embedding = '\\x0102'::bytea WHERE agent = 'zeta'")
    config = tmp_path / "pg.json5"
    config.write_text(
        '{"agents": {"defaults": {"memorySearch": {"store": {"driver": "postgres"}}}}}'
    )
    back = tmp_path / "back"
    (back / "agents" / "other").mkdir(parents=True)
    (back / "agents" / "other" / "memory.db").write_bytes(b"")  # there before: never touched

    failed = copy(tmp_path, f"sqlite:{back}", "--config", str(config), url=url)

    assert sorted(p.name for p in (back / "agents").iterdir()) == ["other"]
    assert list((back / "agents" / "other").iterdir()) == [back / "agents" / "other" / "memory.db"]
    assert failed.returncode == 1
    assert "copying zeta failed" in failed.stderr
    assert "what this run wrote (main, ops, zeta) was removed" in failed.stderr
