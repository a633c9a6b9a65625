"""Integration: each installation (host + state dir) keeps its own workspace record for an agent
in a shared PostgreSQL store (issue #30), across the other's writes and a rebuild's swap."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy import Connection

from memlane.adapters.postgres import first_index
from memlane.adapters.postgres.database import PostgresDatabase
from memlane.adapters.postgres.meta import (
    FIRST_INDEX_KEY,
    installation,
    peek_workspaces,
    register_agent,
)
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


def test_an_interrupted_first_index_names_the_workspace_it_started_on(pg_database: str) -> None:
    """Its meta is written last: before that, the start record is what names the workspace
    (a resume from another folder must not bind the index there and drop its rows)."""
    db = PostgresDatabase.open(pg_database)
    agent = unique_agent()
    store = PostgresIndexStore(db, agent, host="host-a:/state")
    try:
        store.claim_first_index(replace(make_meta(), workspace="/a/ws"), files_total=9)

        assert peek_workspaces(db, agent, "host-a:/state") == ("/a/ws", "/a/ws")
        assert peek_workspaces(db, agent, "host-b:/state") == (None, "/a/ws")
    finally:
        db.close()


def test_a_start_record_without_a_workspace_row_still_names_it(pg_database: str) -> None:
    """A first index claimed before the claim kept the installation's record: the start record
    alone names the workspace, as the meta JSON of a finished index does."""
    db = PostgresDatabase.open(pg_database)
    agent = unique_agent()
    try:

        def claim(conn: Connection) -> None:
            register_agent(conn, agent)
            first_index.claim(conn, agent, "host-a:/state", replace(make_meta(), workspace="/w"), 9)
            conn.exec_driver_sql(
                "DELETE FROM memlane_meta WHERE agent = %s AND key <> %s", (agent, FIRST_INDEX_KEY)
            )

        db.write(claim)

        assert peek_workspaces(db, agent, "host-a:/state") == (None, "/w")
    finally:
        db.close()


def test_an_installation_is_a_host_and_a_state_dir() -> None:
    assert installation("/one") != installation("/two")
    assert installation("/one").endswith(":/one")
