"""Keyword scores of an edited index equal those of a fresh index of the same files.

SQLite's FTS5 does not decrement its averages record (row count, token total) on `DELETE` from
a `contentless_delete=1` table, so with such a table every replace of a file's chunks inflated
the N and token total bm25 reads. The store now deletes keyword rows with FTS5's 'delete'
command and the row's document; this test failed before that.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import memlane
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.domain.keywords import build_fts_query
from memlane.domain.sources import ALL_SOURCES
from tests.integration.store.helpers import (
    keyword_statistics,
    make_chunks,
    make_file,
    make_vectors,
    raw_connect,
)

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


def test_an_edited_index_scores_like_a_fresh_one(tmp_path: Path) -> None:
    edited = _scores(tmp_path / "edited", edit_after_first_index=True)
    fresh = _scores(tmp_path / "fresh", edit_after_first_index=False)
    assert edited == fresh


def test_every_kind_of_write_keeps_the_statistics_of_the_live_rows(tmp_path: Path) -> None:
    # Replacing a file's chunks, attaching vectors (a vector backfill re-inserts each row under a
    # new rid) and deleting a file all delete keyword rows.
    path = tmp_path / "index.db"
    store = SqliteIndexStore.open(path)
    try:
        for name in ("a", "b", "c"):
            chunks = make_chunks(f"memory/{name}.md", 3)
            store.replace_file(make_file(f"memory/{name}.md"), chunks, [None] * 3, "fts-only")
        edited = make_chunks("memory/a.md", 2, version="v2")
        store.replace_file(make_file("memory/a.md", version="v2"), edited, [None] * 2, "fts-only")
        vectors = make_vectors(3, seed=1)
        store.set_vectors(
            "m", {c.id: v for c, v in zip(make_chunks("memory/b.md", 3), vectors, strict=True) if v}
        )
        store.delete_file("memory", "memory/c.md")
    finally:
        store.close()

    conn = raw_connect(path)
    try:
        statistics = keyword_statistics(conn)
    finally:
        conn.close()
    assert statistics["live"][0] == 5
    assert statistics["recorded"] == statistics["live"]
