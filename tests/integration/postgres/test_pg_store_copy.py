"""Integration: `store copy` moves an index SQLite -> PostgreSQL -> SQLite without re-embedding."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memlane.adapters.postgres.database import PostgresDatabase
from memlane.adapters.postgres.postgres_event_log import PostgresEventLog
from memlane.adapters.postgres.postgres_index_store import PostgresIndexStore
from memlane.adapters.postgres.transfer import PostgresIndexTransfer
from memlane.adapters.store.database import SqliteDatabase
from memlane.adapters.store.sqlite_event_log import SqliteEventLog
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.adapters.store.transfer import SqliteIndexTransfer
from memlane.application.ports.event_log import EventLog
from memlane.application.ports.index_store import CacheKey, IndexedFile, IndexStore
from memlane.application.ports.index_transfer import TransferTargetNotEmpty
from memlane.application.store_copy import copy_index
from memlane.domain import events
from memlane.domain.chunks import Chunk, ChunkId, ContentHash
from memlane.domain.index_meta import IndexMeta
from memlane.domain.keywords import build_fts_query
from memlane.domain.search import TimeWindow
from memlane.domain.sources import ALL_SOURCES
from tests.pg_server import fresh_database, unique_agent

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

KEY = CacheKey("fake", "m", "k")
META = IndexMeta(
    schema_version=1,
    chunker_version=1,
    sources=("memory", "sessions"),
    scope_hash="s",
    chunk_tokens=400,
    chunk_overlap=80,
    provider="fake",
    model="m",
    provider_key="k",
    dimensions=3,
)
TEXTS = ["harbour lights at dusk", "the compass points north", "数据库迁移在周六", "회의를 했다"]
T0 = datetime(2026, 1, 5, tzinfo=UTC)


def seed(db: SqliteDatabase) -> None:
    store = SqliteIndexStore(db)
    store.set_meta(META)
    chunks = [
        Chunk(
            ChunkId(f"memory:memory/a.md:{i}"),
            "memory",
            "memory/a.md",
            i,
            i,
            t,
            ContentHash(f"h{i}"),
            time_start=1_000.0 * i,
            time_end=1_000.0 * i + 60,
            context="# Trip notes" if i == 3 else "",
        )
        for i, t in enumerate(TEXTS)
    ]
    vectors = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], None]
    store.replace_file(
        IndexedFile("memory", "memory/a.md", ContentHash("f"), 5.0, 9), chunks, vectors, "m"
    )
    store.cache_put(KEY, {ContentHash("h0"): [1.0, 0.0, 0.0], ContentHash("h1"): [0.0, 1.0, 0.0]})
    log = SqliteEventLog(db)
    log.append(
        [events.FileDeleted(occurred_at=T0, source="memory", path=f"x{i}.md") for i in range(5)]
    )
    log.track("index_file", 5)
    log.compact(keep_last=2)  # positions 4 and 5 remain; the high-water mark stays 5


def ranking(store: IndexStore) -> list[tuple[str, float]]:
    match = build_fts_query("harbour compass 数据库 회의")
    assert match is not None
    return [
        (c.chunk_id, round(c.score, 12))
        for c in store.search_keyword(match, sources=ALL_SOURCES, limit=10)
    ]


def test_sqlite_to_postgres_and_back_keeps_everything(tmp_path: Path, pg_database: str) -> None:
    source_db = SqliteDatabase.open(tmp_path / "a.db")
    seed(source_db)
    agent = unique_agent()
    pg = PostgresDatabase.open(pg_database)

    to_pg = copy_index(SqliteIndexTransfer(source_db), PostgresIndexTransfer(pg, agent))
    back_db = SqliteDatabase.open(tmp_path / "b.db")
    back = copy_index(PostgresIndexTransfer(pg, agent), SqliteIndexTransfer(back_db))

    assert to_pg == back
    assert (to_pg.files, to_pg.chunks, to_pg.vectors, to_pg.cache) == (1, 4, 3, 2)
    assert (to_pg.events, to_pg.last_position, to_pg.tracking) == (2, 5, 1)
    stores: list[IndexStore] = [
        SqliteIndexStore(source_db),
        PostgresIndexStore(pg, agent),
        SqliteIndexStore(back_db),
    ]
    for store in stores:
        assert store.meta() == META
        assert ranking(store) == ranking(stores[0])
        hits = store.search_vector([0.0, 1.0, 0.1], model="m", sources=ALL_SOURCES, limit=1)
        assert hits[0].chunk_id == "memory:memory/a.md:1"
        assert store.cache_get(KEY, [ContentHash("h1")]) == {ContentHash("h1"): [0.0, 1.0, 0.0]}
        assert [c.id for c in store.chunks_without_vectors("m")] == ["memory:memory/a.md:3"]
        # Each chunk's time range travels too (issue #26).
        (undated,) = store.chunks_without_vectors("m")
        assert (undated.time_start, undated.time_end) == (3_000.0, 3_060.0)
        # So does the heading trail the backfill embeds it with (issue #24).
        assert undated.context == "# Trip notes"
        window = TimeWindow(since=1_000.0, until=1_030.0)
        dated = store.search_keyword(
            build_fts_query("harbour compass 数据库 회의") or "",
            sources=ALL_SOURCES,
            limit=10,
            window=window,
        )
        assert [c.chunk_id for c in dated] == ["memory:memory/a.md:1"]
    logs: list[EventLog] = [
        SqliteEventLog(source_db),
        PostgresEventLog(pg, agent),
        SqliteEventLog(back_db),
    ]
    for log in logs:
        assert [r.position for r in log.read()] == [4, 5]
        assert log.last_position() == 5
        assert log.tracked("index_file") == 5
    assert logs[1].append([events.FileDeleted(occurred_at=T0, source="memory", path="y.md")]) == [6]
    pg.close()


def test_a_target_with_an_index_is_refused(tmp_path: Path, pg_database: str) -> None:
    source_db = SqliteDatabase.open(tmp_path / "a.db")
    seed(source_db)
    pg = PostgresDatabase.open(pg_database)
    agent = unique_agent()
    copy_index(SqliteIndexTransfer(source_db), PostgresIndexTransfer(pg, agent))

    with pytest.raises(TransferTargetNotEmpty):
        copy_index(SqliteIndexTransfer(source_db), PostgresIndexTransfer(pg, agent))
    pg.close()


def test_the_cli_copies_every_agent_there_and_back(tmp_path: Path, pg_url: str) -> None:
    """`memlane store copy --to URL --all-agents`, then back into a new SQLite state dir."""
    url = fresh_database(pg_url)
    for agent in ("main", "ops"):
        (tmp_path / "state" / "agents" / agent).mkdir(parents=True)
        db = SqliteDatabase.open(tmp_path / "state" / "agents" / agent / "memory.db")
        seed(db)
        db.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env["HOME"] = str(tmp_path)
    base = [sys.executable, "-m", "memlane.entrypoints", "--workspace", str(tmp_path)]

    there = subprocess.run(
        [
            *base,
            "--state-dir",
            str(tmp_path / "state"),
            "store",
            "copy",
            "--to",
            url,
            "--all-agents",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    config = tmp_path / "pg.json5"
    config.write_text(
        json.dumps({"agents": {"defaults": {"memorySearch": {"store": {"driver": "postgres"}}}}})
    )
    back = subprocess.run(
        [
            *base,
            "--config",
            str(config),
            "--agent",
            "ops",
            "store",
            "copy",
            "--to",
            f"sqlite:{tmp_path / 'back'}",
        ],
        capture_output=True,
        text=True,
        env={**env, "MEMLANE_STORE_URL": url},
        timeout=120,
        check=False,
    )
    again = subprocess.run(
        [*base, "--state-dir", str(tmp_path / "state"), "store", "copy", "--to", url],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )

    assert there.returncode == 0, there.stderr
    assert there.stdout.splitlines() == [
        f"{a}: 1 file(s), 4 chunk(s), 3 vector(s), 2 cached, 2 event(s) copied and verified"
        for a in ("main", "ops")
    ]
    assert back.returncode == 0, back.stderr
    copied = SqliteIndexStore(
        SqliteDatabase.open(tmp_path / "back" / "agents" / "ops" / "memory.db")
    )
    assert copied.meta() == META
    assert again.returncode == 1
    assert "already has an index" in again.stderr


def test_all_agents_checks_every_target_before_writing_any(tmp_path: Path, pg_url: str) -> None:
    """#30.5: one agent already at the target refuses the whole copy, naming it; nothing of the
    others is written, so a rerun after clearing it copies everything."""
    url = fresh_database(pg_url)
    for agent in ("main", "ops", "zeta"):
        (tmp_path / "state" / "agents" / agent).mkdir(parents=True)
        db = SqliteDatabase.open(tmp_path / "state" / "agents" / agent / "memory.db")
        seed(db)
        db.close()
    pg = PostgresDatabase.open(url)
    PostgresIndexTransfer(pg, "ops").load(
        SqliteIndexTransfer.open(tmp_path / "state" / "agents" / "ops" / "memory.db").snapshot(),
        iter(()),
        iter(()),
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env["HOME"] = str(tmp_path)

    done = subprocess.run(
        [sys.executable, "-m", "memlane.entrypoints", "--workspace", str(tmp_path),
         "--state-dir", str(tmp_path / "state"), "store", "copy", "--to", url, "--all-agents"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip

    assert done.returncode == 1
    assert "already has an index of ops: nothing was copied" in done.stderr
    assert done.stdout == ""
    for agent in ("main", "zeta"):
        assert PostgresIndexTransfer(pg, agent).counts().files == 0
    pg.close()
