"""Integration: each installation (host + state dir) keeps its own workspace record for an agent
in a shared PostgreSQL store (issue #30), across the other's writes and a rebuild's swap."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memlane.adapters.postgres.database import PostgresDatabase
from memlane.adapters.postgres.meta import installation, peek_workspaces
from memlane.adapters.postgres.postgres_index_store import PostgresIndexStore
from tests.contract._index_store_support import make_meta
from tests.pg_server import unique_agent

pytestmark = [pytest.mark.integration, pytest.mark.postgres]


def test_each_installation_reads_its_own_workspace(pg_database: str) -> None:
    db = PostgresDatabase.open(pg_database)
    agent = unique_agent()
    first = PostgresIndexStore(db, agent, host="host-a:/state")
    second = PostgresIndexStore(db, agent, host="host-b:/state")
    try:
        assert peek_workspaces(db, agent, "host-a:/state") == (None, None)
        first.set_meta(replace(make_meta(), workspace="/a/ws"))
        # No record of its own yet: the last writer's, which its first sync replaces.
        meta_b = second.meta()
        assert meta_b is not None and meta_b.workspace == "/a/ws"
        assert peek_workspaces(db, agent, "host-b:/state") == (None, "/a/ws")

        second.set_meta(replace(make_meta(), workspace="/b/ws"))

        assert [s.meta().workspace for s in (first, second)] == ["/a/ws", "/b/ws"]  # type: ignore[union-attr]
        assert peek_workspaces(db, agent, "host-a:/state") == ("/a/ws", "/b/ws")

        rebuild = first.begin_rebuild()
        rebuild.set_meta(replace(make_meta(), workspace="/a/moved"))
        rebuild.commit()

        assert [s.meta().workspace for s in (first, second)] == ["/a/moved", "/b/ws"]  # type: ignore[union-attr]
    finally:
        db.close()


def test_an_installation_is_a_host_and_a_state_dir() -> None:
    assert installation("/one") != installation("/two")
    assert installation("/one").endswith(":/one")
