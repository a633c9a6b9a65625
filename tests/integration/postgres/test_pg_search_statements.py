"""Integration: what a search through the application asks a PostgreSQL store, statement by
statement (the bundled model, a real server). Before session 25 every search counted every chunk
of its agent three times (`count(*) FILTER (WHERE model ...)`: 326 ms at 1M chunks); a search in
a new process, after another process's searches, now counts nothing and scans nothing whole."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine

from memlane.application.memory import MemoryManager
from memlane.entrypoints.api import open_manager

pytestmark = [pytest.mark.integration, pytest.mark.postgres]


def _manager(root: Path, url: str) -> MemoryManager:
    return open_manager(
        workspace=root / "ws",
        agent_id="a",
        state_dir=root / "state",
        config={"store": {"driver": "postgres"}},
        env={"MEMLANE_STORE_URL": url, "HOME": str(root)},
    )


@pytest.fixture
def statements() -> Iterator[list[str]]:
    seen: list[str] = []

    def record(conn: object, cursor: object, statement: str, *rest: object) -> None:
        seen.append(re.sub(r"\s+", " ", statement))

    event.listen(Engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(Engine, "before_cursor_execute", record)


def test_a_search_in_a_new_process_counts_no_chunk(
    pg_database: str, tmp_path: Path, statements: list[str]
) -> None:
    (tmp_path / "ws" / "memory").mkdir(parents=True)
    for n in range(4):
        (tmp_path / "ws" / "memory" / f"n{n}.md").write_text(
            f"# Note {n}\n\nThe harbour beacon number {n} is lit at dusk.\n", encoding="utf-8"
        )
    first = _manager(tmp_path, pg_database)
    first.sync()
    first.search("when is the beacon lit")
    first.close()

    later = _manager(tmp_path, pg_database)  # the next CLI command
    statements.clear()
    response = later.search("when is the beacon lit")
    later.close()

    assert response.results, "the search answers"
    whole_counts = [s for s in statements if "count(*) FILTER" in s]
    piece_scans = [s for s in statements if "NOT EXISTS" in s and "memlane_chunk_pieces" in s]
    assert whole_counts == [] and piece_scans == [], statements
    assert any("memlane_keyword_stats" in s for s in statements)  # the listener saw the search
