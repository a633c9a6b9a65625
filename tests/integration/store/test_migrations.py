"""Migrations are history: a file at every past version upgrades to exactly today's schema.

`_CREATED_BY` records what each store schema version created, as read back from
`sqlite_master` of files built by the code that shipped it (versions 1-4 shipped together
in 1bd3098 and were unchanged until the DDL was frozen; version 5, the issues table, came with
issue #14; version 6 rebuilt the keyword table; version 7 gave chunks their time range,
issue #26; version 8 indexed their spans; version 9 gave chunks their heading trail, issue #24; version 10
held note chunks' piece vectors, issue #24).
If a test here fails because a
migration now creates something else, the migration was edited: add a new one instead.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlean
from sqlalchemy import Connection
from structlog.testing import capture_logs

from memlane.adapters.store import migrations
from memlane.adapters.store.database import SqliteDatabase
from memlane.adapters.store.sqlite_event_log import SqliteEventLog
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.adapters.store.vector_codec import to_blob
from memlane.application.ports.index_store import CacheKey, IndexedFile
from memlane.domain import events
from memlane.domain.chunks import Chunk, ChunkId, ContentHash
from memlane.domain.index_meta import IndexMeta, index_meta_to_json
from memlane.domain.keywords import FTS_TOKENIZER, fts_document
from memlane.domain.sources import ALL_SOURCES
from tests.integration.store.helpers import consistency, keyword_statistics

pytestmark = pytest.mark.integration

LATEST = len(migrations.MIGRATIONS)
VERSIONS = range(1, LATEST + 1)
# The tokenizer of the keyword table before porter stemming (commit 2c02d52).
OLD_TOKENIZER = "unicode61 remove_diacritics 2"

_FTS_SHADOWS = [
    (
        "table",
        "chunks_fts_config",
        "CREATE TABLE 'chunks_fts_config'(k PRIMARY KEY, v) WITHOUT ROWID",
    ),
    (
        "table",
        "chunks_fts_data",
        "CREATE TABLE 'chunks_fts_data'(id INTEGER PRIMARY KEY, block BLOB)",
    ),
    (
        "table",
        "chunks_fts_docsize",
        "CREATE TABLE 'chunks_fts_docsize'(id INTEGER PRIMARY KEY, sz BLOB, origin INTEGER)",
    ),
    (
        "table",
        "chunks_fts_idx",
        "CREATE TABLE 'chunks_fts_idx'(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID",
    ),
]

_CREATED_BY: dict[int, list[tuple[str, str, str | None]]] = {
    1: [
        ("table", "meta", "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)"),
        ("index", "sqlite_autoindex_meta_1", None),
        ("table", "sqlite_sequence", "CREATE TABLE sqlite_sequence(name,seq)"),
        (
            "table",
            "chunks",
            "CREATE TABLE chunks ( rid INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "
            "id TEXT NOT NULL, source TEXT NOT NULL, path TEXT NOT NULL, "
            "start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, hash TEXT NOT NULL, "
            "text TEXT NOT NULL, model TEXT NOT NULL, embedding BLOB, timestamp FLOAT, "
            "updated_at FLOAT NOT NULL, UNIQUE (id) )",
        ),
        ("index", "sqlite_autoindex_chunks_1", None),
        ("index", "idx_chunks_file", "CREATE INDEX idx_chunks_file ON chunks (source, path)"),
        ("index", "idx_chunks_model", "CREATE INDEX idx_chunks_model ON chunks (model)"),
        (
            "table",
            "embedding_cache",
            "CREATE TABLE embedding_cache ( provider TEXT NOT NULL, model TEXT NOT NULL, "
            "provider_key TEXT NOT NULL, hash TEXT NOT NULL, embedding BLOB NOT NULL, "
            "dims INTEGER NOT NULL, last_used INTEGER NOT NULL, "
            "PRIMARY KEY (provider, model, provider_key, hash) )",
        ),
        ("index", "sqlite_autoindex_embedding_cache_1", None),
        (
            "index",
            "idx_embedding_cache_last_used",
            "CREATE INDEX idx_embedding_cache_last_used ON embedding_cache (last_used)",
        ),
        (
            "table",
            "events",
            "CREATE TABLE events ( position INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "
            "type TEXT NOT NULL, version INTEGER NOT NULL, data TEXT NOT NULL, "
            "occurred_at TEXT NOT NULL )",
        ),
        (
            "table",
            "files",
            "CREATE TABLE files ( source TEXT NOT NULL, path TEXT NOT NULL, hash TEXT NOT NULL, "
            "mtime FLOAT NOT NULL, size INTEGER NOT NULL, PRIMARY KEY (source, path) )",
        ),
        ("index", "sqlite_autoindex_files_1", None),
        (
            "table",
            "tracking",
            "CREATE TABLE tracking ( handler TEXT NOT NULL, position INTEGER NOT NULL, "
            "PRIMARY KEY (handler) )",
        ),
        ("index", "sqlite_autoindex_tracking_1", None),
    ],
    2: [
        (
            "table",
            "chunks_fts",
            "CREATE VIRTUAL TABLE chunks_fts USING fts5(terms, content='', contentless_delete=1, "
            f"tokenize='{FTS_TOKENIZER}')",
        ),
        *_FTS_SHADOWS,
    ],
    3: [
        (
            "index",
            "idx_chunks_with_vector",
            "CREATE INDEX idx_chunks_with_vector ON chunks(rid) WHERE embedding IS NOT NULL",
        )
    ],
    4: [
        (
            "table",
            "vector_deletions",
            "CREATE TABLE vector_deletions(seq INTEGER PRIMARY KEY AUTOINCREMENT, "
            "rid INTEGER NOT NULL)",
        )
    ],
    5: [
        (
            "table",
            "issues",
            "CREATE TABLE issues(key TEXT NOT NULL, path TEXT NOT NULL, reason TEXT NOT NULL, "
            "mtime FLOAT, size INTEGER, PRIMARY KEY (key, path))",
        ),
        ("index", "sqlite_autoindex_issues_1", None),
    ],
    # Version 6 rebuilt the keyword table without contentless_delete (bm25's statistics).
    6: [
        (
            "table",
            "chunks_fts",
            f"CREATE VIRTUAL TABLE chunks_fts USING fts5(terms, content='', "
            f"tokenize='{FTS_TOKENIZER}')",
        ),
        *[
            (kind, name, sql.replace(", origin INTEGER", "") if sql else sql)
            for kind, name, sql in _FTS_SHADOWS
        ],
    ],
    # Version 7: each chunk's time range (ALTER TABLE inserts the columns before UNIQUE).
    7: [
        (
            "table",
            "chunks",
            "CREATE TABLE chunks ( rid INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "
            "id TEXT NOT NULL, source TEXT NOT NULL, path TEXT NOT NULL, "
            "start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, hash TEXT NOT NULL, "
            "text TEXT NOT NULL, model TEXT NOT NULL, embedding BLOB, timestamp FLOAT, "
            "updated_at FLOAT NOT NULL, time_start FLOAT, time_end FLOAT, UNIQUE (id) )",
        ),
        (
            "index",
            "idx_chunks_time",
            "CREATE INDEX idx_chunks_time ON chunks (time_end, time_start)",
        ),
    ],
    # Version 8: each chunk's span indexed (the longest bounds a window's walk).
    8: [
        (
            "index",
            "idx_chunks_span",
            "CREATE INDEX idx_chunks_span ON chunks (time_end - time_start)",
        ),
    ],
    # Version 9: the heading trail a note's chunk is embedded with.
    9: [
        (
            "table",
            "chunks",
            "CREATE TABLE chunks ( rid INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "
            "id TEXT NOT NULL, source TEXT NOT NULL, path TEXT NOT NULL, "
            "start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, hash TEXT NOT NULL, "
            "text TEXT NOT NULL, model TEXT NOT NULL, embedding BLOB, timestamp FLOAT, "
            "updated_at FLOAT NOT NULL, time_start FLOAT, time_end FLOAT, "
            "context TEXT NOT NULL DEFAULT '', UNIQUE (id) )",
        ),
    ],
    # Version 10: the piece vectors of note chunks.
    10: [
        (
            "table",
            "chunk_pieces",
            "CREATE TABLE chunk_pieces ( chunk_id TEXT NOT NULL PRIMARY KEY, "
            "model TEXT NOT NULL, pieces INTEGER NOT NULL, vectors BLOB NOT NULL )",
        ),
        (
            "index",
            "sqlite_autoindex_chunk_pieces_1",
            None,
        ),
    ],
}

KEY = CacheKey("fake", "m", "key")
META = IndexMeta(
    schema_version=1,
    chunker_version=1,
    sources=("memory", "sessions"),
    scope_hash="scope",
    chunk_tokens=400,
    chunk_overlap=80,
    provider="fake",
    model="m",
    provider_key="key",
    dimensions=4,
)
FILE = IndexedFile(source="memory", path="memory/a.md", hash=ContentHash("h-a"), mtime=1.0, size=9)
CHUNKS = [
    Chunk(
        id=ChunkId(f"memory/a.md#{i}"),
        source="memory",
        path="memory/a.md",
        start_line=i + 1,
        end_line=i + 1,
        text=text,
        hash=ContentHash(f"h-{i}"),
    )
    for i, text in enumerate(["alpha apples", "beta bananas"])
]
VECTORS = [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]]
EVENT = events.FileDeleted(occurred_at=datetime(2026, 1, 5, tzinfo=UTC), source="memory", path="x")


def _master(path: Path) -> set[tuple[str, str, str | None]]:
    """sqlite_master as (type, name, sql with whitespace collapsed); vec0's own tables aside."""
    conn = sqlean.connect(str(path))
    try:
        rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    finally:
        conn.close()
    return {
        (str(kind), str(name), None if sql is None else " ".join(str(sql).split()))
        for kind, name, table, sql in rows
        if not str(table).startswith("chunks_vec")
    }


def _vec_tables(path: Path) -> set[str]:
    conn = sqlean.connect(str(path))
    try:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE tbl_name LIKE 'chunks_vec%'")
        return {str(r[0]) for r in rows}
    finally:
        conn.close()


def _expected(version: int) -> set[tuple[str, str, str | None]]:
    """What versions 1..`version` leave: a later version's object replaces one of its name."""
    by_name: dict[str, tuple[str, str, str | None]] = {}
    for v in range(1, version + 1):
        for kind, name, sql in _CREATED_BY[v]:
            by_name[name] = (kind, name, None if sql is None else " ".join(sql.split()))
    return set(by_name.values())


def _history(version: int, tokenizer: str) -> list[migrations.Migration]:
    """The migrations up to `version`, with the keyword table built by `tokenizer`."""

    def m002_keyword_table(conn: Connection) -> None:
        migrations.m002_keyword_table(conn, tokenizer)

    steps: list[migrations.Migration] = list(migrations.MIGRATIONS[:version])
    if version >= 2:  # version 2 introduced the keyword table
        steps[1] = m002_keyword_table
    return steps


def _build_at(path: Path, version: int, tokenizer: str = FTS_TOKENIZER) -> None:
    """Make a file at `version` holding what the code of that version would have written."""
    db = SqliteDatabase(path)
    history = _history(version, tokenizer)
    db.write(lambda conn: migrations.migrate(conn, history))
    db.write(lambda conn: _write_rows(conn, version))
    db.close()


def _write_rows(conn: Connection, version: int) -> None:
    sql = conn.exec_driver_sql
    sql(
        "INSERT INTO files(source, path, hash, mtime, size) VALUES (?, ?, ?, ?, ?)",
        (FILE.source, FILE.path, FILE.hash, FILE.mtime, FILE.size),
    )
    for rid, (chunk, vector) in enumerate(zip(CHUNKS, VECTORS, strict=True), start=1):
        sql(
            "INSERT INTO chunks(rid, id, source, path, start_line, end_line, hash, text, model, "
            "embedding, timestamp, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                rid,
                chunk.id,
                chunk.source,
                chunk.path,
                chunk.start_line,
                chunk.end_line,
                chunk.hash,
                chunk.text,
                "m",
                to_blob(vector),
                None,
                1.0,
            ),
        )
        if version >= 2:  # keyword rows exist from version 2
            terms = fts_document(chunk.text)
            sql("INSERT INTO chunks_fts(rowid, terms) VALUES (?, ?)", (rid, terms))
    # The vec0 table is left to be rebuilt at open, as after a writer without sqlite-vec.
    sql("INSERT INTO meta(key, value) VALUES ('vector_dims', '4')")
    sql("INSERT INTO meta(key, value) VALUES ('vector_generation', '1')")
    sql("INSERT INTO meta(key, value) VALUES ('index_meta', ?)", (index_meta_to_json(META),))
    record = events.event_to_record(EVENT)
    sql(
        "INSERT INTO events(type, version, data, occurred_at) VALUES (?, ?, ?, ?)",
        (
            events.type_name(EVENT),
            events.EVENT_VERSION,
            json.dumps(record),
            EVENT.occurred_at.isoformat(),
        ),
    )
    sql("INSERT INTO tracking(handler, position) VALUES ('h', 1)")
    sql(
        "INSERT INTO embedding_cache(provider, model, provider_key, hash, embedding, dims, "
        "last_used) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (KEY.provider, KEY.model, KEY.provider_key, "h-0", to_blob(VECTORS[0]), 4, 1),
    )


def _fresh(path: Path) -> None:
    """Today's code writing the same content into a new file."""
    store = SqliteIndexStore.open(path)
    store.replace_file(FILE, CHUNKS, VECTORS, "m")
    store.set_meta(META)
    store.close()


class TestFrozenHistory:
    @pytest.mark.parametrize("version", VERSIONS)
    def test_each_version_creates_what_it_created_when_it_shipped(
        self, tmp_path: Path, version: int
    ) -> None:
        db = SqliteDatabase(tmp_path / "index.db")

        db.write(lambda conn: migrations.migrate(conn, migrations.MIGRATIONS[:version]))
        db.close()

        assert _master(tmp_path / "index.db") == _expected(version)

    def test_the_recorded_history_reaches_todays_schema(self, tmp_path: Path) -> None:
        _fresh(tmp_path / "fresh.db")

        assert _master(tmp_path / "fresh.db") == _expected(LATEST)


class TestUpgrade:
    def test_an_upgrade_is_said_and_a_new_file_is_not(self, tmp_path: Path) -> None:
        """Older memlanes refuse the file afterwards, so the upgrade must not be silent."""
        _build_at(tmp_path / "old.db", 6)

        with capture_logs() as said:
            SqliteDatabase.open(tmp_path / "old.db").close()
            SqliteDatabase.open(tmp_path / "new.db").close()

        (upgraded,) = [e for e in said if e["event"] == "index_upgraded"]
        assert (upgraded["from_schema"], upgraded["to_schema"]) == (6, LATEST)
        assert upgraded["path"] == str(tmp_path / "old.db")
        assert upgraded["log_level"] == "warning"

    @pytest.mark.parametrize("tokenizer", [FTS_TOKENIZER, OLD_TOKENIZER])
    @pytest.mark.parametrize("version", VERSIONS)
    def test_a_file_at_every_version_upgrades_to_the_fresh_schema(
        self, tmp_path: Path, version: int, tokenizer: str
    ) -> None:
        old, fresh = tmp_path / "old.db", tmp_path / "fresh.db"
        _build_at(old, version, tokenizer)
        _fresh(fresh)

        SqliteIndexStore.open(old).close()

        assert _master(old) == _master(fresh)
        assert _vec_tables(old) == _vec_tables(fresh)

    @pytest.mark.parametrize("version", VERSIONS)
    def test_data_survives_the_upgrade(self, tmp_path: Path, version: int) -> None:
        path = tmp_path / "old.db"
        _build_at(path, version, OLD_TOKENIZER)

        db = SqliteDatabase.open(path)
        store, log = SqliteIndexStore(db), SqliteEventLog(db)

        assert store.files() == [FILE]
        assert store.meta() == META
        assert [
            c.chunk_id for c in store.search_keyword('"apple"', sources=ALL_SOURCES, limit=5)
        ] == [CHUNKS[0].id]
        hits = store.search_vector(VECTORS[1], model="m", sources=ALL_SOURCES, limit=1)
        assert [(h.chunk_id, h.score) for h in hits] == [(CHUNKS[1].id, 1.0)]
        assert store.cache_get(KEY, [ContentHash("h-0")]) == {ContentHash("h-0"): VECTORS[0]}
        assert [r.event for r in log.read()] == [EVENT]
        assert log.tracked("h") == 1
        assert consistency(path) == {"chunks": 2, "fts": 2, "vec": 2}
        db.close()

    def test_drifted_keyword_statistics_are_repaired_by_the_upgrade(self, tmp_path: Path) -> None:
        # A version-5 file whose keyword rows were deleted with DELETE (contentless_delete):
        # FTS5 still counts them in bm25's N and token total until version 6 rebuilds the table.
        path = tmp_path / "old.db"
        _build_at(path, 5)
        conn = sqlean.connect(str(path))
        conn.execute("DELETE FROM chunks_fts WHERE rowid = 2")
        conn.execute("DELETE FROM chunks WHERE rid = 2")
        conn.commit()
        drifted = keyword_statistics(conn)
        conn.close()
        assert drifted["recorded"][0] == 2 and drifted["live"][0] == 1

        SqliteIndexStore.open(path).close()

        conn = sqlean.connect(str(path))
        repaired = keyword_statistics(conn)
        conn.close()
        assert repaired["recorded"] == repaired["live"] == (1, 2)
