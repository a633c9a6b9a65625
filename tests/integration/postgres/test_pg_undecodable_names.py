"""Integration: the PostgreSQL store keeps a name that is not valid UTF-8 as the sources spell it,
so `status` (text, JSON, gRPC) never meets the surrogate escapes Python read it with."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memlane.adapters.postgres.database import PostgresDatabase
from memlane.adapters.postgres.postgres_index_store import PostgresIndexStore
from memlane.adapters.sources.filesystem import FilesystemMemorySource
from memlane.application.issues import IssueBoard
from memlane.application.ports.index_store import RecordedIssue
from tests.pg_server import unique_agent

pytestmark = [pytest.mark.integration, pytest.mark.postgres]


def test_the_issue_is_stored_and_read_back_in_its_readable_spelling(
    pg_database: str, tmp_path: Path
) -> None:
    memory = os.fsencode(tmp_path / "memory")
    os.mkdir(memory)
    with open(os.path.join(memory, b"caf\xe9.md"), "wb") as handle:
        handle.write(b"# x\nwalrus\n")
    scan = FilesystemMemorySource(workspace=str(tmp_path)).scan()
    db = PostgresDatabase.open(pg_database)
    store = PostgresIndexStore(db, unique_agent(), host="host-a:/state")
    try:
        board = IssueBoard(store)
        board.replace_scan_issues("memory", scan.issues)
        board.persist()

        recorded = store.issues()
    finally:
        db.close()

    reason = "file name is not valid UTF-8"
    assert recorded == [RecordedIssue("scan:memory", "memory/caf\\xe9.md", reason)]
