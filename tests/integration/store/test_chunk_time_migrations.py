"""Migrations that date chunks: version 7 gave each chunk its time range, version 8 indexed each
chunk's span. Both upgrade a populated index in place, no vector or keyword row rewritten."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlean
from sqlalchemy import Connection

from memlane.adapters.store import migrations
from memlane.adapters.store.database import SqliteDatabase
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.adapters.store.vector_codec import to_blob
from memlane.domain.index_meta import index_meta_to_json
from memlane.domain.search import TimeWindow
from memlane.domain.sources import ALL_SOURCES
from tests.integration.store.helpers import consistency
from tests.integration.store.test_migrations import META

pytestmark = pytest.mark.integration

DAY = 86_400.0


class TestChunkTimesUpgrade:
    """Version 7 dates the chunks of a populated version-6 index without re-embedding."""

    def _populated_v6(self, path: Path) -> None:
        db = SqliteDatabase(path)
        db.write(lambda conn: migrations.migrate(conn, migrations.MIGRATIONS[:6]))

        def rows(conn: Connection) -> None:
            sql = conn.exec_driver_sql
            files = [
                ("memory", "memory/2026-11-17.md", 5_000.0),
                ("memory", "memory/2026-02-30.md", 6_000.0),  # not a calendar date
                ("memory", "notes/plan.md", 7_000.0),
                ("sessions", "s1.jsonl", 8_000.0),
            ]
            for source, file_path, mtime in files:
                sql(
                    "INSERT INTO files(source, path, hash, mtime, size) VALUES (?, ?, 'h', ?, 1)",
                    (source, file_path, mtime),
                )
            chunks = [
                (1, "memory", "memory/2026-11-17.md", None, [1.0, 0.0, 0.0, 0.0]),
                (2, "memory", "memory/2026-02-30.md", None, [0.0, 1.0, 0.0, 0.0]),
                (3, "memory", "notes/plan.md", None, [0.0, 0.0, 1.0, 0.0]),
                (4, "sessions", "s1.jsonl", 1_790_000_000.0, [0.0, 0.0, 0.0, 1.0]),
                (5, "sessions", "s1.jsonl", None, [0.5, 0.5, 0.0, 0.0]),
            ]
            for rid, source, file_path, stamp, vector in chunks:
                sql(
                    "INSERT INTO chunks(rid, id, source, path, start_line, end_line, hash, "
                    "text, model, embedding, timestamp, updated_at) "
                    "VALUES (?, ?, ?, ?, 1, 1, 'h', 'apples', 'm', ?, ?, 1.0)",
                    (rid, f"c{rid}", source, file_path, to_blob(vector), stamp),
                )
                sql("INSERT INTO chunks_fts(rowid, terms) VALUES (?, ?)", (rid, "apples"))
            sql("INSERT INTO meta(key, value) VALUES ('vector_dims', '4')")
            sql("INSERT INTO meta(key, value) VALUES ('vector_generation', '1')")
            sql(
                "INSERT INTO meta(key, value) VALUES ('index_meta', ?)", (index_meta_to_json(META),)
            )

        db.write(rows)
        db.close()

    @staticmethod
    def _column(path: Path, sql: str) -> list[tuple[object, ...]]:
        conn = sqlean.connect(str(path))
        try:
            return [tuple(r) for r in conn.execute(sql).fetchall()]
        finally:
            conn.close()

    def test_times_come_from_what_the_file_holds_and_vectors_stay(self, tmp_path: Path) -> None:
        path = tmp_path / "old.db"
        self._populated_v6(path)
        before = self._column(path, "SELECT rid, embedding, model FROM chunks ORDER BY rid")

        SqliteIndexStore.open(path).close()

        day = 1_794_873_600.0  # 2026-11-17T00:00:00Z
        assert self._column(path, "SELECT rid, time_start, time_end FROM chunks ORDER BY rid") == [
            (1, day, day + 86_399),
            (2, 6_000.0, 6_000.0),
            (3, 7_000.0, 7_000.0),
            (4, 1_790_000_000.0, 1_790_000_000.0),
            (5, 8_000.0, 8_000.0),
        ]
        assert self._column(path, "SELECT rid, embedding, model FROM chunks ORDER BY rid") == before
        assert consistency(path) == {"chunks": 5, "fts": 5, "vec": 5}

    def test_an_upgraded_index_answers_a_time_filter(self, tmp_path: Path) -> None:
        path = tmp_path / "old.db"
        self._populated_v6(path)
        store = SqliteIndexStore.open(path)
        window = TimeWindow(since=1_794_873_600.0, until=1_794_959_999.0)

        keyword = store.search_keyword('"apples"', sources=ALL_SOURCES, limit=5, window=window)
        vector = store.search_vector(
            [1.0, 1.0, 1.0, 1.0], model="m", sources=ALL_SOURCES, limit=5, window=window
        )
        store.close()

        assert [c.path for c in keyword] == ["memory/2026-11-17.md"]
        assert [c.path for c in vector] == ["memory/2026-11-17.md"]
        assert keyword[0].time_start == 1_794_873_600.0


class TestChunkSpanUpgrade:
    """Version 8 indexes the spans of a populated version-7 index without re-embedding."""

    def _populated_v7(self, path: Path) -> None:
        db = SqliteDatabase(path)
        db.write(lambda conn: migrations.migrate(conn, migrations.MIGRATIONS[:7]))

        def rows(conn: Connection) -> None:
            sql = conn.exec_driver_sql
            sql(
                "INSERT INTO files(source, path, hash, mtime, size) VALUES ('sessions', 's.jsonl', 'h', 1, 1)"
            )
            # rid 1: a transcript chunk over 30 days; 2..40: one-day chunks after it; 41: undated.
            spans: list[tuple[float | None, float | None]] = [(100 * DAY, 130 * DAY)]
            spans += [(d * DAY, d * DAY + 3_600) for d in range(131, 170)]
            spans.append((None, None))
            for rid, (start, end) in enumerate(spans, start=1):
                sql(
                    "INSERT INTO chunks(rid, id, source, path, start_line, end_line, hash, text, "
                    "model, embedding, timestamp, updated_at, time_start, time_end) "
                    "VALUES (?, ?, 'sessions', 's.jsonl', 1, 1, 'h', 'apples', 'm', ?, NULL, "
                    "1.0, ?, ?)",
                    (rid, f"c{rid}", to_blob([1.0, rid / 100, 0.0, 0.0]), start, end),
                )
                sql("INSERT INTO chunks_fts(rowid, terms) VALUES (?, 'apples')", (rid,))
            sql("INSERT INTO meta(key, value) VALUES ('vector_dims', '4')")
            sql("INSERT INTO meta(key, value) VALUES ('vector_generation', '1')")
            sql(
                "INSERT INTO meta(key, value) VALUES ('index_meta', ?)", (index_meta_to_json(META),)
            )

        db.write(rows)
        db.close()

    def test_the_span_index_is_added_and_the_rows_stay(self, tmp_path: Path) -> None:
        path = tmp_path / "old.db"
        self._populated_v7(path)
        read = "SELECT rid, embedding, model, time_start, time_end FROM chunks ORDER BY rid"
        before = TestChunkTimesUpgrade._column(path, read)

        SqliteIndexStore.open(path).close()

        assert TestChunkTimesUpgrade._column(path, read) == before
        plan = TestChunkTimesUpgrade._column(
            path, "EXPLAIN QUERY PLAN SELECT max(time_end - time_start) FROM chunks"
        )
        assert "idx_chunks_span" in str(plan[0][-1])
        assert TestChunkTimesUpgrade._column(
            path, "SELECT value FROM meta WHERE key = 'store_schema_version'"
        ) == [(str(len(migrations.MIGRATIONS)),)]
        assert consistency(path) == {"chunks": 41, "fts": 41, "vec": 41}

    def test_a_long_chunk_around_a_window_is_found(self, tmp_path: Path) -> None:
        # The window is one day inside the 30-day chunk, which ends 19 days after the window:
        # a bound on time_end without the real longest span would stop the walk before it.
        path = tmp_path / "old.db"
        self._populated_v7(path)
        store = SqliteIndexStore.open(path)
        window = TimeWindow(since=110 * DAY, until=111 * DAY)

        keyword = store.search_keyword('"apples"', sources=ALL_SOURCES, limit=50, window=window)
        vector = store.search_vector(
            [1.0, 0.0, 0.0, 0.0], model="m", sources=ALL_SOURCES, limit=50, window=window
        )
        store.close()

        assert [c.chunk_id for c in keyword] == ["c1"]
        assert [c.chunk_id for c in vector] == ["c1"]
