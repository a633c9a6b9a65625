"""The confidence sample (first vectors of a model by chunk id) is read without sorting the model.

Before, SQLite read every row of the model through idx_chunks_model and sorted them by id on
each search (~0.3 s at 100k chunks); the walk of the id index stops after the sample.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import event

from memlane.adapters.store import background_sample
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from tests.integration.store.helpers import make_chunks, make_file, make_vectors, raw_connect

pytestmark = pytest.mark.integration


def _fill(path: Path, files: dict[str, str]) -> SqliteIndexStore:
    """One 4-chunk file per entry, its vectors under the given model."""
    store = SqliteIndexStore.open(path)
    for seed, (name, model) in enumerate(files.items()):
        chunks = make_chunks(name, 4)
        store.replace_file(make_file(name), chunks, make_vectors(4, seed), model)
    return store


def _expected(path: Path, model: str, limit: int) -> list[bytes]:
    conn = raw_connect(path)
    try:
        rows = conn.execute(
            "SELECT embedding FROM chunks WHERE model = ? AND embedding IS NOT NULL",
            (model,),
        ).fetchall()
        ids = conn.execute(
            "SELECT id FROM chunks WHERE model = ? AND embedding IS NOT NULL", (model,)
        ).fetchall()
    finally:
        conn.close()
    ordered = sorted(zip((i for (i,) in ids), (bytes(b) for (b,) in rows), strict=True))
    return [b for _, b in ordered[:limit]]


class TestBackgroundSample:
    def test_no_statement_of_background_cosines_sorts_the_model_rows(self, tmp_path: Path) -> None:
        path = tmp_path / "index.db"
        store = _fill(path, {"memory/a.md": "m", "memory/b.md": "m"})
        ran: list[tuple[str, tuple[object, ...]]] = []

        def record(
            _conn: object, _cursor: object, sql: str, params: tuple[object, ...], *_: object
        ) -> None:
            ran.append((sql, params))

        event.listen(store.database.engine, "before_cursor_execute", record)
        assert len(store.background_cosines([1.0] * 8, model="m", limit=3)) == 3
        store.close()
        sampled = [(sql, params) for sql, params in ran if "embedding" in sql]
        assert sampled
        conn = raw_connect(path)
        try:
            for sql, params in sampled:
                plan = " ".join(
                    str(row[3]) for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params)
                )
                assert "TEMP B-TREE" not in plan, (sql, plan)
        finally:
            conn.close()

    def test_the_plan_walks_the_id_index_without_a_sort(self, tmp_path: Path) -> None:
        _fill(tmp_path / "index.db", {"memory/a.md": "m"}).close()
        conn = raw_connect(tmp_path / "index.db")
        try:
            plan = " ".join(
                str(row[3])
                for row in conn.execute(
                    f"EXPLAIN QUERY PLAN {background_sample.BY_ID_WALK}", (20_000, "m", 256)
                )
            )
        finally:
            conn.close()
        assert "sqlite_autoindex_chunks_1" in plan
        assert "TEMP B-TREE" not in plan
        assert "idx_chunks_model" not in plan

    def test_the_same_rows_as_the_model_index_gives(self, tmp_path: Path) -> None:
        path = tmp_path / "index.db"
        store = _fill(path, {"memory/b.md": "m", "memory/a.md": "m", "memory/c.md": "other"})
        with store.database.read() as conn:
            got = background_sample.sample_blobs(conn, "m", 5)
        store.close()
        assert got == _expected(path, "m", 5)
        assert len(got) == 5

    def test_a_rare_model_past_the_walk_bound_is_still_found_in_id_order(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The first rows by id belong to another model: the bounded walk finds too few, the
        model index answers, with the same rows a full sort would give."""
        monkeypatch.setattr(background_sample, "WALK_BOUND", 4)
        path = tmp_path / "index.db"
        store = _fill(path, {"memory/a.md": "old", "memory/b.md": "new", "memory/c.md": "new"})
        with store.database.read() as conn:
            got = background_sample.sample_blobs(conn, "new", 6)
            fewer = background_sample.sample_blobs(conn, "new", 100)
        store.close()
        assert got == _expected(path, "new", 6)
        assert len(got) == 6
        assert fewer == _expected(path, "new", 100)
        assert len(fewer) == 8
