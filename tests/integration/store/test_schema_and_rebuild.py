"""Migrations, open-time reconciliation, WAL readers, and the rebuild swap on real files."""

from __future__ import annotations

import shutil
import threading
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlean
from sqlalchemy import Connection

from memlane.adapters.store import migrations
from memlane.adapters.store.database import SqliteDatabase
from memlane.adapters.store.sqlite_event_log import SqliteEventLog
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.application.ports.index_records import SyncRecord
from memlane.application.ports.index_store import StoreError
from memlane.domain import events
from memlane.domain.japanese_words import WORD_MARK, mark
from memlane.domain.keywords import FTS_DOCUMENT_VERSION, fts_document, quote_fts_term
from memlane.domain.sources import ALL_SOURCES
from tests.integration.store.helpers import consistency, make_chunks, make_file, make_vectors

pytestmark = pytest.mark.integration
T0 = datetime(2026, 1, 5, tzinfo=UTC)


def _meta(path: Path, key: str) -> str | None:
    conn = sqlean.connect(str(path))
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    finally:
        conn.close()
    return None if row is None else str(row[0])


class TestMigrations:
    def test_a_new_file_gets_every_table_and_the_latest_version(self, tmp_path: Path) -> None:
        db = SqliteDatabase.open(tmp_path / "index.db")
        db.close()

        conn = sqlean.connect(str(tmp_path / "index.db"))
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        conn.close()
        assert {
            "meta",
            "files",
            "chunks",
            "embedding_cache",
            "events",
            "tracking",
            "chunks_fts",
        } <= names
        assert _meta(tmp_path / "index.db", "store_schema_version") == str(
            len(migrations.MIGRATIONS)
        )

    def test_only_missing_migrations_run_and_rerunning_is_harmless(self, tmp_path: Path) -> None:
        db = SqliteDatabase.open(tmp_path / "index.db")
        ran: list[str] = []

        def m003_example(conn: Connection) -> None:
            ran.append("m003")
            conn.exec_driver_sql("CREATE TABLE IF NOT EXISTS example(x)")

        applied = db.write(lambda c: migrations.migrate(c, (*migrations.MIGRATIONS, m003_example)))
        again = db.write(lambda c: migrations.migrate(c, (*migrations.MIGRATIONS, m003_example)))
        db.close()

        assert (applied, again, ran) == (["m003_example"], [], ["m003"])

    def test_a_tokenizer_change_rebuilds_the_keyword_table(self, tmp_path: Path) -> None:
        path = tmp_path / "index.db"
        store = SqliteIndexStore.open(path)
        store.replace_file(
            make_file("memory/a.md"), make_chunks("memory/a.md", 4), [None] * 4, "fts-only"
        )
        store.close()
        conn = sqlean.connect(str(path))
        conn.execute("UPDATE meta SET value = 'ascii' WHERE key = 'fts_tokenizer'")
        conn.execute("DROP TABLE chunks_fts")
        conn.commit()
        conn.close()

        reopened = SqliteIndexStore.open(path)

        assert len(reopened.search_keyword('"topic2"', sources=ALL_SOURCES, limit=5)) == 1
        assert consistency(path)["fts"] == 4
        reopened.close()

    def test_another_document_analysis_rebuilds_the_keyword_table(self, tmp_path: Path) -> None:
        # Rows are deleted by handing FTS5 the document they were built from: a table built by
        # another `fts_document` must be rebuilt before any row of it is deleted.
        path = tmp_path / "index.db"
        store = SqliteIndexStore.open(path)
        store.replace_file(
            make_file("memory/a.md"), make_chunks("memory/a.md", 4), [None] * 4, "fts-only"
        )
        store.close()
        conn = sqlean.connect(str(path))
        conn.execute("UPDATE meta SET value = 'old' WHERE key = 'fts_document_version'")
        conn.execute("INSERT INTO chunks_fts(rowid, terms) VALUES (999, 'stale postings')")
        conn.commit()
        conn.close()

        reopened = SqliteIndexStore.open(path)

        assert reopened.search_keyword('"stale"', sources=ALL_SOURCES, limit=5) == []
        assert consistency(path)["fts"] == 4
        assert _meta(path, "fts_document_version") == FTS_DOCUMENT_VERSION
        reopened.close()

    def test_a_version_1_japanese_index_gets_its_word_terms_at_open(self, tmp_path: Path) -> None:
        """Version 1 indexed Japanese as bigrams only; the upgrade adds the marked word terms
        (domain/japanese_words.py) from the chunks' text, without touching the chunks."""
        path = tmp_path / "index.db"
        store = SqliteIndexStore.open(path)
        chunk = make_chunks("memory/ja.md", 1)[0]
        chunk = replace(chunk, text="タワーの話をしたけれども")
        store.replace_file(make_file("memory/ja.md"), [chunk], [None], "fts-only")
        store.close()
        conn = sqlean.connect(str(path))
        version_1 = " ".join(t for t in fts_document(chunk.text).split() if WORD_MARK not in t)
        # A contentless FTS5 row is deleted by handing back the document it was built from.
        conn.execute(
            "INSERT INTO chunks_fts(chunks_fts, rowid, terms) SELECT 'delete', rid, ? FROM chunks",
            (fts_document(chunk.text),),
        )
        conn.execute("INSERT INTO chunks_fts(rowid, terms) SELECT rid, ? FROM chunks", (version_1,))
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'fts_document_version'")
        conn.commit()
        word = quote_fts_term(mark("タワー"))
        matched = "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?"
        assert conn.execute(matched, (word,)).fetchone()[0] == 0
        conn.close()

        reopened = SqliteIndexStore.open(path)

        assert [
            c.chunk_id for c in reopened.search_keyword(word, sources=ALL_SOURCES, limit=5)
        ] == [chunk.id]
        assert consistency(path)["fts"] == 1
        reopened.close()

    def test_vectors_written_without_sqlite_vec_reach_the_vec_table_later(
        self, tmp_path: Path
    ) -> None:
        """Without the extension search uses numpy; the vec table heals at the next open."""
        path = tmp_path / "index.db"
        plain = SqliteIndexStore(SqliteDatabase.open(path, load_vector=False))
        assert plain.vector_status()[0] is False
        plain.replace_file(
            make_file("memory/a.md"), make_chunks("memory/a.md", 3), make_vectors(3, 0), "m"
        )
        assert (
            len(
                plain.search_vector(
                    make_vectors(1, 0)[0] or [], model="m", sources=ALL_SOURCES, limit=3
                )
            )
            == 3
        )
        plain.close()

        healed = SqliteIndexStore.open(path)

        assert consistency(path)["vec"] == 3
        assert _meta(path, "vec_table_stale") == "0"
        healed.close()


class TestConcurrency:
    def test_a_reader_is_not_blocked_by_an_open_write(self, tmp_path: Path) -> None:
        """WAL: a second connection reads the last committed state while a write is open."""
        path = tmp_path / "index.db"
        store = SqliteIndexStore.open(path)
        store.replace_file(
            make_file("memory/a.md"), make_chunks("memory/a.md", 2), [None, None], "fts-only"
        )
        writer = sqlean.connect(str(path), isolation_level=None)
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("DELETE FROM files")

        seen = [f.path for f in store.files()]

        writer.execute("ROLLBACK")
        writer.close()
        assert seen == ["memory/a.md"]
        store.close()

    def test_threads_can_write_and_search_together(self, tmp_path: Path) -> None:
        store = SqliteIndexStore.open(tmp_path / "index.db")
        errors: list[BaseException] = []

        def write(k: int) -> None:
            try:
                for n in range(10):
                    name = f"memory/t{k}-{n}.md"
                    store.replace_file(
                        make_file(name), make_chunks(name, 3), make_vectors(3, n), "m"
                    )
                    store.search_vector(
                        make_vectors(1, n)[0] or [], model="m", sources=ALL_SOURCES, limit=3
                    )
            except BaseException as exc:  # collected for the assertion below
                errors.append(exc)

        threads = [threading.Thread(target=write, args=(k,)) for k in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

        assert errors == []
        assert consistency(tmp_path / "index.db")["chunks"] == 90
        store.close()


class TestRebuildSwap:
    def test_event_log_and_tracking_survive_the_swap(self, tmp_path: Path) -> None:
        """Events appended during the rebuild are in the swapped-in file; positions continue."""
        db = SqliteDatabase.open(tmp_path / "index.db")
        store, log = SqliteIndexStore(db), SqliteEventLog(db)
        log.append([events.FileDeleted(occurred_at=T0, source="memory", path="x")] * 3)
        log.track("handler", 2)
        log.compact(keep_last=0)
        rebuild = store.begin_rebuild()
        rebuild.replace_file(
            make_file("memory/n.md"), make_chunks("memory/n.md", 2), make_vectors(2, 0), "m"
        )
        log.append([events.FileDeleted(occurred_at=T0, source="memory", path="y")])

        rebuild.commit()

        assert [r.position for r in log.read()] == [3, 4]
        assert log.tracked("handler") == 2
        assert log.append([events.FileDeleted(occurred_at=T0, source="memory", path="z")]) == [5]
        assert [f.path for f in store.files()] == ["memory/n.md"]
        assert consistency(tmp_path / "index.db")["vec"] == 2
        db.close()

    def test_the_last_sync_record_survives_the_swap(self, tmp_path: Path) -> None:
        """Until the rebuilding sync records itself, `status` names the sync before it (a
        rebuild killed after its swap, during its vectors, left "last sync: never")."""
        db = SqliteDatabase.open(tmp_path / "index.db")
        store = SqliteIndexStore(db)
        before = SyncRecord("2026-12-01T10:00:00+00:00", "explicit", False, 3, 0)
        store.record_sync(before)
        rebuild = store.begin_rebuild()
        rebuild.replace_file(
            make_file("memory/n.md"), make_chunks("memory/n.md", 2), make_vectors(2, 0), "m"
        )

        rebuild.commit()

        assert store.last_sync() == before
        db.close()

    def test_another_open_store_sees_the_new_index(self, tmp_path: Path) -> None:
        """A second SqliteDatabase on the same file (as another process would) follows the swap."""
        path = tmp_path / "index.db"
        first = SqliteIndexStore.open(path)
        first.replace_file(
            make_file("memory/old.md"), make_chunks("memory/old.md", 2), make_vectors(2, 1), "m"
        )
        second = SqliteIndexStore.open(path)
        query = make_vectors(1, 1)[0] or []
        assert (
            second.search_vector(query, model="m", sources=ALL_SOURCES, limit=1)[0].path
            == "memory/old.md"
        )
        rebuild = first.begin_rebuild()
        rebuild.replace_file(
            make_file("memory/new.md"), make_chunks("memory/new.md", 2), make_vectors(2, 1), "m"
        )

        rebuild.commit()

        assert (
            second.search_vector(query, model="m", sources=ALL_SOURCES, limit=1)[0].path
            == "memory/new.md"
        )
        assert [f.path for f in second.files()] == ["memory/new.md"]
        assert not list(tmp_path.glob("index.db.tmp-*"))
        first.close()
        second.close()

    def test_a_failed_commit_keeps_the_old_index_and_removes_the_temp_file(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "index.db"
        store = SqliteIndexStore.open(path)
        store.replace_file(
            make_file("memory/old.md"), make_chunks("memory/old.md", 2), [None, None], "fts-only"
        )
        rebuild = store.begin_rebuild()
        rebuild.replace_file(
            make_file("memory/new.md"), make_chunks("memory/new.md", 2), [None, None], "fts-only"
        )
        # Make the carry-over impossible: the live event table is gone.
        conn = sqlean.connect(str(path))
        conn.execute("DROP TABLE events")
        conn.commit()
        conn.close()

        with pytest.raises(StoreError):
            rebuild.commit()

        assert [f.path for f in store.files()] == ["memory/old.md"]
        assert not list(tmp_path.glob("index.db.tmp-*"))
        store.close()

    def test_a_rebuild_without_room_for_its_copy_is_refused_before_writing(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = tmp_path / "index.db"
        store = SqliteIndexStore.open(path)
        store.replace_file(
            make_file("memory/old.md"), make_chunks("memory/old.md", 2), [None, None], "fts-only"
        )
        size = path.stat().st_size
        real_usage = shutil.disk_usage

        def room(free: int) -> None:
            def usage(folder: str | Path) -> object:
                return real_usage(folder)._replace(free=free)

            monkeypatch.setattr(shutil, "disk_usage", usage)

        room(2 * size - 1)  # the copy and the swap's log need twice the index
        with pytest.raises(StoreError, match=r"a full reindex needs about .* MB free beside"):
            store.begin_rebuild()
        assert not list(tmp_path.glob("index.db.tmp-*"))
        assert [f.path for f in store.files()] == ["memory/old.md"]

        room(2 * size)
        store.begin_rebuild().abort()
        store.close()
