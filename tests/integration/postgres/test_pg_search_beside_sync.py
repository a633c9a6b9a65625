"""A search on PostgreSQL does not wait for another host's sync of the same agent.

One agent's syncs are serialised across hosts by an advisory lock. A search's sync used to wait
for it with no bound, so a search beside another host's first index or rebuild hung for the
whole of it. Here the test holds that lock as the other host would, and the real CLI searches:
it answers from the index as it is, says why, and `index` afterwards takes its turn.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memlane.adapters.postgres.database import PostgresDatabase
from memlane.adapters.postgres.sync_lock import PostgresSyncLock
from memlane.application.sync_report import HOST_BUSY
from tests.integration.postgres.test_pg_two_hosts_one_agent import _host, _memlane
from tests.pg_server import fresh_database, unique_agent

pytestmark = [pytest.mark.integration, pytest.mark.postgres]


def test_a_search_answers_while_another_host_holds_the_agents_sync(
    tmp_path: Path, pg_url: str
) -> None:
    url = fresh_database(pg_url)
    agent = unique_agent()
    host = _host(tmp_path / "host", agent)
    assert _memlane(host, agent, url, "index").returncode == 0
    (host / "ws" / "memory" / "new.md").write_text("# New\n\nThe walrus tank is cleaned.\n")

    db = PostgresDatabase.open(url)
    try:
        with PostgresSyncLock(db, agent).hold():  # another host's sync under way
            # Before the fix this blocked until the subprocess timeout failed the test.
            found = _memlane(host, agent, url, "search", "queue worker", "--json")
            with PostgresSyncLock(db, agent).try_hold() as second:
                assert second is False  # the lock is the database's, not the process's
    finally:
        db.close()
    indexed = _memlane(host, agent, url, "index")
    after = _memlane(host, agent, url, "search", "walrus tank", "--json")

    assert found.returncode == 0, found.stderr
    payload = json.loads(found.stdout)
    assert HOST_BUSY in payload["warnings"]
    assert payload["results"]  # the index as it was answers
    assert indexed.returncode == 0 and "1 file(s) indexed" in indexed.stdout, indexed.stdout
    later = json.loads(after.stdout)
    assert HOST_BUSY not in later.get("warnings", [])
    assert any(r["path"] == "memory/new.md" for r in later["results"])
