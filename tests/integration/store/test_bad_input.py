"""Bad input against the real SQLite store: clear errors or defined empty results, index kept."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sqlean
from structlog.testing import capture_logs

from memlane.adapters.store.database import SqliteDatabase
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.application.ports.index_store import (
    DimensionMismatch,
    StoreCorrupt,
    StoreError,
    StoreReadOnly,
)
from memlane.domain.sources import ALL_SOURCES
from tests.integration.store.helpers import DIMS, consistency, make_chunks, make_file, make_vectors
from tests.integration.store.test_migrations import _build_at

pytestmark = pytest.mark.integration


@pytest.fixture
def store(tmp_path: Path) -> SqliteIndexStore:
    real = SqliteIndexStore.open(tmp_path / "index.db")
    real.replace_file(
        make_file("memory/a.md"), make_chunks("memory/a.md", 3), make_vectors(3, 0), "m"
    )
    return real


class TestQueries:
    @pytest.mark.parametrize(
        "match",
        ['"', "NEAR(a b", "a AND", "OR", "col:thing", "^", "a + + b", "'\"'", "\x00", "((((a"],
    )
    def test_fts_syntax_characters_give_an_empty_result(
        self, store: SqliteIndexStore, match: str
    ) -> None:
        assert store.search_keyword(match, sources=ALL_SOURCES, limit=5) == []
        assert store.search_keyword('"note"', sources=ALL_SOURCES, limit=5)

    def test_nan_and_infinite_queries_raise_store_error(self, store: SqliteIndexStore) -> None:
        for bad in (math.nan, math.inf, -math.inf):
            with pytest.raises(StoreError):
                store.search_vector(
                    [bad] + [0.0] * (DIMS - 1), model="m", sources=ALL_SOURCES, limit=3
                )

    def test_wrong_dimension_keeps_the_vector_table(self, store: SqliteIndexStore) -> None:
        """The vec rows are all still there after a query of the wrong dimension."""
        with pytest.raises(DimensionMismatch):
            store.search_vector([1.0] * (DIMS + 1), model="m", sources=ALL_SOURCES, limit=3)

        assert consistency(store.database.path)["vec"] == 3

    def test_vec0_path_gives_the_same_answer_as_numpy(self, store: SqliteIndexStore) -> None:
        vec0 = SqliteIndexStore(store.database, vector_search="vec0")
        query = make_vectors(1, 1)[0] or []

        numpy_hits = store.search_vector(query, model="m", sources=ALL_SOURCES, limit=3)
        vec0_hits = vec0.search_vector(query, model="m", sources=ALL_SOURCES, limit=3)

        assert [h.chunk_id for h in vec0_hits] == [h.chunk_id for h in numpy_hits]
        assert [h.score for h in vec0_hits] == pytest.approx(
            [h.score for h in numpy_hits], abs=1e-5
        )


class TestDamagedFiles:
    def test_a_file_that_is_not_a_database_raises_store_corrupt_and_stays(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "index.db"
        path.write_bytes(b"this is certainly not sqlite" * 200)

        with pytest.raises(StoreCorrupt, match=str(path)):
            SqliteIndexStore.open(path)

        assert path.read_bytes() == b"this is certainly not sqlite" * 200

    def test_a_truncated_database_raises_store_corrupt(self, tmp_path: Path) -> None:
        path = tmp_path / "index.db"
        store = SqliteIndexStore.open(path)
        store.replace_file(
            make_file("memory/a.md"), make_chunks("memory/a.md", 50), make_vectors(50, 0), "m"
        )
        store.close()
        data = path.read_bytes()
        path.write_bytes(data[:100] + b"\xff" * 4000 + data[4100:])

        with pytest.raises(StoreCorrupt):
            SqliteIndexStore.open(path)

        assert path.exists()

    def test_an_index_emptied_under_an_open_process_says_why_it_cannot_be_opened(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # A running watch keeps a connection open; the file emptied under it looks new, and
        # making it a WAL database again waits for that connection forever.
        monkeypatch.setattr("memlane.adapters.store.engine.BUSY_TIMEOUT_MS", 200)
        path = tmp_path / "index.db"
        store = SqliteIndexStore.open(path)
        store.replace_file(
            make_file("memory/a.md"), make_chunks("memory/a.md", 5), make_vectors(5, 0), "m"
        )
        holder = sqlean.connect(path)
        holder.execute("SELECT count(*) FROM chunks").fetchall()
        try:
            store.close()
            path.write_bytes(b"")

            with pytest.raises(StoreError, match=r"empty \(0 bytes\) while another process"):
                SqliteIndexStore.open(path)
        finally:
            holder.close()

        reopened = SqliteIndexStore.open(path)  # once it is gone, the empty file is a new index
        reopened.close()

    def test_a_newer_schema_is_refused(self, tmp_path: Path) -> None:
        path = tmp_path / "index.db"
        SqliteDatabase.open(path).close()
        conn = __import__("sqlean").connect(str(path))
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'store_schema_version'")
        conn.commit()
        conn.close()

        with pytest.raises(StoreError, match="newer"):
            SqliteDatabase.open(path)


class TestReadOnly:
    def test_a_read_only_connection_is_reopened_and_the_write_retried(
        self, store: SqliteIndexStore
    ) -> None:
        """A read-only failure gets one reopen-and-retry, counted."""
        db = store.database
        db.reset()
        with db.engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA query_only = 1")

        store.delete_file("memory", "memory/a.md")

        stats = store.recovery_stats()
        assert (stats.attempts, stats.successes, stats.failures) == (1, 1, 0)
        assert "readonly" in (stats.last_error or "")
        assert store.files() == []

    @pytest.mark.skipif(
        not hasattr(os, "setuid") or os.geteuid() != 0, reason="needs root to drop to nobody"
    )
    def test_a_read_only_file_reads_but_refuses_writes(
        self, tmp_path: Path, store: SqliteIndexStore
    ) -> None:
        """Another user without write permission can search; a write is a clear StoreReadOnly."""
        store.close()
        tmp_path.chmod(0o755)
        for p in tmp_path.iterdir():
            p.chmod(0o644)
        script = (
            "import sys\n"
            "from memlane.adapters.store.sqlite_index_store import SqliteIndexStore\n"
            "from memlane.application.ports.index_store import StoreError\n"
            "s = SqliteIndexStore.open(sys.argv[1])\n"
            "print(len(s.files()))\n"
            "try:\n"
            "    s.delete_file('memory', 'memory/a.md')\n"
            "except StoreError as e:\n"
            "    stats = s.recovery_stats()\n"
            "    print(type(e).__name__, stats.attempts, stats.failures)\n"
        )
        try:
            result = self._run_as_nobody(script, tmp_path)
        except PermissionError:
            pytest.skip("this interpreter cannot be run by an unprivileged user here")

        assert result.stdout.split() == ["1", "StoreReadOnly", "1", "1"], result.stderr
        assert consistency(tmp_path / "index.db")["chunks"] == 3

    def test_an_older_layout_that_cannot_be_written_says_it_needs_its_upgrade(
        self, tmp_path: Path
    ) -> None:
        """A file of an older schema must be migrated before it can be read: refused, saying
        why and what to do (it said only "read-only"), and left as it was. The file and its
        folder are made immutable (`chattr +i`), which holds for root too."""
        older = tmp_path / "old"
        older.mkdir()
        path = older / "index.db"
        _build_at(path, 6)
        locked = [str(path), str(older)]
        if subprocess.run(["chattr", "+i", *locked], check=False).returncode != 0:
            pytest.skip("chattr +i is not available on this file system")
        try:
            with pytest.raises(StoreReadOnly) as refused:
                SqliteDatabase.open(path)
        finally:
            subprocess.run(["chattr", "-i", *locked], check=True)

        said = str(refused.value)
        assert "made by an older memlane (index schema 6, this one" in said
        assert "needs a one-time upgrade" in said and "writable" in said
        conn = sqlean.connect(str(path))
        try:
            (version,) = conn.execute(
                "SELECT value FROM meta WHERE key = 'store_schema_version'"
            ).fetchone()
        finally:
            conn.close()
        assert version == "6"

    def test_an_index_of_an_older_keyword_analysis_is_searched_read_only(
        self, tmp_path: Path, store: SqliteIndexStore
    ) -> None:
        """A new keyword analysis rebuilds the keyword table at open, which a read-only file
        cannot: it is searched with the table it has (it was refused as read-only)."""
        store.database.write(
            lambda conn: conn.exec_driver_sql(
                "UPDATE meta SET value = '2' WHERE key = 'fts_document_version'"
            )
        )
        store.close()
        locked = [str(tmp_path / "index.db"), str(tmp_path)]
        if subprocess.run(["chattr", "+i", *locked], check=False).returncode != 0:
            pytest.skip("chattr +i is not available on this file system")
        try:
            with capture_logs() as said:
                reopened = SqliteIndexStore.open(tmp_path / "index.db")
            try:
                hits = reopened.search_keyword('"topic1"', sources=ALL_SOURCES, limit=5)
            finally:
                reopened.close()
        finally:
            subprocess.run(["chattr", "-i", *locked], check=True)

        assert hits
        assert [e["event"] for e in said] == ["index_derived_tables_outdated"]

    @staticmethod
    def _run_as_nobody(script: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", script, str(tmp_path / "index.db")],
            capture_output=True, text=True, timeout=60, check=False,
            env={**os.environ, "PYTHONPATH": str(Path.cwd())},
            user=65534, group=65534,
        )  # fmt: skip
