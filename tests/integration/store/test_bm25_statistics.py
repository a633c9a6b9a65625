"""Keyword scores of an edited index equal those of a fresh index of the same files.

Known defect (found in session 6, not fixed): SQLite's FTS5 does not decrement its averages
record (row count, token total) on `DELETE` from a `contentless_delete=1` table, so every
replace of a file's chunks inflates the N and token total bm25 reads. The test is marked
xfail(strict): when the store keeps its own statistics it passes, and strict mode then fails
the run until the mark is removed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import memlane
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.domain.keywords import build_fts_query
from memlane.domain.sources import ALL_SOURCES

pytestmark = pytest.mark.integration

NOTES = {
    f"memory/n{i}.md": f"# Note {i}\n\nThe deploy of service {i} went fine on Tuesday.\n"
    for i in range(1, 6)
}
EDITED = "# Note 1\n\nThe deploy of service one was rolled back on Friday.\n"


def _scores(root: Path, *, edit_after_first_index: bool) -> list[tuple[str, float]]:
    workspace = root / "ws"
    for path, text in NOTES.items():
        final = EDITED if path == "memory/n1.md" and not edit_after_first_index else text
        (workspace / path).parent.mkdir(parents=True, exist_ok=True)
        (workspace / path).write_text(final)
    with memlane.open(
        workspace=workspace, state_dir=root / "state", config={"provider": "none"}, env={}
    ) as memory:
        memory.sync()
        if edit_after_first_index:
            (workspace / "memory/n1.md").write_text(EDITED)
            memory.sync()
    # The raw bm25 of the keyword leg (the API shows scores normalised to the best hit).
    store = SqliteIndexStore.open(root / "state" / "agents" / "main" / "memory.db")
    try:
        match = build_fts_query("deploy service rolled")
        assert match is not None
        hits = store.search_keyword(match, sources=ALL_SOURCES, limit=10)
    finally:
        store.close()
    return [(hit.chunk_id, round(hit.score, 9)) for hit in hits]


@pytest.mark.xfail(
    strict=True,
    reason="FTS5 contentless_delete tables keep deleted rows in bm25's N (bench/RESULTS.md)",
)
def test_an_edited_index_scores_like_a_fresh_one(tmp_path: Path) -> None:
    edited = _scores(tmp_path / "edited", edit_after_first_index=True)
    fresh = _scores(tmp_path / "fresh", edit_after_first_index=False)
    assert edited == fresh
