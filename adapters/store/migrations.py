"""Adapter plumbing: numbered, idempotent schema migrations, each with its own literal DDL.

The store's own schema version lives in `meta` under `store_schema_version` (distinct from
`IndexMeta.schema_version`, which describes the shape of the indexed content). Each migration
runs once, in order, inside the caller's transaction, and is written so that running it again is
harmless. A file written by a newer memlane (a higher version than we know) is refused.

A migration is history: it creates what its version created, spelled out, and is never edited
afterwards (a change of schema is a new migration). The column lists of m001 are the exact text
SQLAlchemy emitted when that version shipped, so files made then and now are identical.
tests/integration/store/test_migrations.py builds a file at every version and upgrades it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Final

from sqlalchemy import Connection

from memlane.adapters.store import meta_table, schema
from memlane.domain.keywords import FTS_DOCUMENT_VERSION, FTS_TOKENIZER, fts_document

Migration = Callable[[Connection], None]


class SchemaTooNewError(Exception):
    """The file was migrated by a newer version of memlane."""


# Created before any migration runs, because the version itself is stored in it.
_META = "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)"

_M001: Final = (
    "CREATE TABLE IF NOT EXISTS chunks (\n"
    "\trid INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, \n"
    "\tid TEXT NOT NULL, \n"
    "\tsource TEXT NOT NULL, \n"
    "\tpath TEXT NOT NULL, \n"
    "\tstart_line INTEGER NOT NULL, \n"
    "\tend_line INTEGER NOT NULL, \n"
    "\thash TEXT NOT NULL, \n"
    "\ttext TEXT NOT NULL, \n"
    "\tmodel TEXT NOT NULL, \n"
    "\tembedding BLOB, \n"
    "\ttimestamp FLOAT, \n"
    "\tupdated_at FLOAT NOT NULL, \n"
    "\tUNIQUE (id)\n"
    ")",
    "CREATE INDEX IF NOT EXISTS idx_chunks_file ON chunks (source, path)",
    "CREATE INDEX IF NOT EXISTS idx_chunks_model ON chunks (model)",
    "CREATE TABLE IF NOT EXISTS embedding_cache (\n"
    "\tprovider TEXT NOT NULL, \n"
    "\tmodel TEXT NOT NULL, \n"
    "\tprovider_key TEXT NOT NULL, \n"
    "\thash TEXT NOT NULL, \n"
    "\tembedding BLOB NOT NULL, \n"
    "\tdims INTEGER NOT NULL, \n"
    "\tlast_used INTEGER NOT NULL, \n"
    "\tPRIMARY KEY (provider, model, provider_key, hash)\n"
    ")",
    "CREATE INDEX IF NOT EXISTS idx_embedding_cache_last_used ON embedding_cache (last_used)",
    "CREATE TABLE IF NOT EXISTS events (\n"
    "\tposition INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, \n"
    "\ttype TEXT NOT NULL, \n"
    "\tversion INTEGER NOT NULL, \n"
    "\tdata TEXT NOT NULL, \n"
    "\toccurred_at TEXT NOT NULL\n"
    ")",
    "CREATE TABLE IF NOT EXISTS files (\n"
    "\tsource TEXT NOT NULL, \n"
    "\tpath TEXT NOT NULL, \n"
    "\thash TEXT NOT NULL, \n"
    "\tmtime FLOAT NOT NULL, \n"
    "\tsize INTEGER NOT NULL, \n"
    "\tPRIMARY KEY (source, path)\n"
    ")",
    "CREATE TABLE IF NOT EXISTS tracking (\n"
    "\thandler TEXT NOT NULL, \n"
    "\tposition INTEGER NOT NULL, \n"
    "\tPRIMARY KEY (handler)\n"
    ")",
)

# The tokenizer is deliberately not frozen: it is the domain's current one, recorded under
# `fts_tokenizer`, and a file built with another is rebuilt at open (reconcile.py).
_M002_FTS: Final = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5("
    "terms, content='', contentless_delete=1, tokenize='{tokenizer}')"
)

_M003: Final = (
    "CREATE INDEX IF NOT EXISTS idx_chunks_with_vector ON chunks(rid) WHERE embedding IS NOT NULL"
)

_M004: Final = (
    "CREATE TABLE IF NOT EXISTS vector_deletions("
    "seq INTEGER PRIMARY KEY AUTOINCREMENT, rid INTEGER NOT NULL)"
)


# Per-file problems kept with the index (issue #14): a new process must still report them, and
# the version (mtime, size) they were found in, so that an unreadable file is not read again.
_M005: Final = (
    "CREATE TABLE IF NOT EXISTS issues("
    "key TEXT NOT NULL, path TEXT NOT NULL, reason TEXT NOT NULL, mtime FLOAT, size INTEGER, "
    "PRIMARY KEY (key, path))"
)

# The keyword table again, without `contentless_delete=1`: a DELETE on such a table does not take
# the deleted rows out of FTS5's row count and token total (SQLite 3.50), so bm25 drifted with
# every edit. Rows are now deleted with the 'delete' command and their document (rows.py).
_M006_FTS: Final = (
    "CREATE VIRTUAL TABLE chunks_fts USING fts5(terms, content='', tokenize='{tokenizer}')"
)


# When each chunk's text was written (issue #26): a time range per chunk, indexed for the
# `since` / `until` filters. Existing rows are dated from what the file already holds: message
# time for transcripts, the day of a `YYYY-MM-DD.md` name, else the file's mtime; a note's dated
# headings are read when the file is next indexed. No vector or keyword row is touched.
_M007: Final = (
    "ALTER TABLE chunks ADD COLUMN time_start FLOAT",
    "ALTER TABLE chunks ADD COLUMN time_end FLOAT",
    "UPDATE chunks SET time_start = timestamp, time_end = timestamp "
    "WHERE source = 'sessions' AND timestamp IS NOT NULL",
    "UPDATE chunks SET "
    "time_start = CAST(strftime('%s', substr(path, -13, 10)) AS FLOAT), "
    "time_end = CAST(strftime('%s', substr(path, -13, 10)) AS FLOAT) + 86399 "
    "WHERE time_start IS NULL AND (path GLOB '*/[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9].md' "
    "OR path GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9].md') "
    "AND date(substr(path, -13, 10)) = substr(path, -13, 10)",
    "UPDATE chunks SET time_start = (SELECT f.mtime FROM files f WHERE f.source = chunks.source "
    "AND f.path = chunks.path), time_end = (SELECT f.mtime FROM files f "
    "WHERE f.source = chunks.source AND f.path = chunks.path) WHERE time_start IS NULL",
    "CREATE INDEX IF NOT EXISTS idx_chunks_time ON chunks (time_end, time_start)",
)

# The longest span of a chunk, `max(time_end - time_start)`, read from an index (a table scan
# without it: 134 ms at 1M chunks). A window's rows satisfy `time_end <= until + longest span`,
# which bounds the walk of idx_chunks_time at both ends (see time_span.py).
_M008: Final = "CREATE INDEX IF NOT EXISTS idx_chunks_span ON chunks (time_end - time_start)"

# The heading trail a note's chunk is indexed with (domain/heading_trail.py). Rows written
# before it hold "": their chunker version is older, so the index is rebuilt at the next sync
# (reindex reason "chunking_changed") and only the chunks that gain a trail are embedded again.
_M009: Final = "ALTER TABLE chunks ADD COLUMN context TEXT NOT NULL DEFAULT ''"


# The piece vectors of note chunks (domain/note_pieces.py), one row per chunk and model; made by
# the vector backfill after the chunks' own vectors, so an index upgraded to this version keeps
# every vector it has and only embeds its notes' pieces.
_M010: Final = (
    "CREATE TABLE IF NOT EXISTS chunk_pieces (\n"
    "\tchunk_id TEXT NOT NULL PRIMARY KEY, \n"
    "\tmodel TEXT NOT NULL, \n"
    "\tpieces INTEGER NOT NULL, \n"
    "\tvectors BLOB NOT NULL\n"
    ")"
)


def _fill_keyword_rows(conn: Connection) -> None:
    """Give every chunk already present its keyword row (today's document analysis)."""
    existing = conn.exec_driver_sql("SELECT rid, text FROM chunks").all()
    if existing:
        conn.exec_driver_sql(
            "INSERT INTO chunks_fts(rowid, terms) VALUES (?, ?)",
            [(rid, fts_document(text)) for rid, text in existing],
        )


def m001_core_tables(conn: Connection) -> None:
    """Create files, chunks, embedding_cache, events and tracking, and name the file."""
    for statement in _M001:
        conn.exec_driver_sql(statement)
    conn.exec_driver_sql(
        "INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)",
        (meta_table.DB_ID_KEY, uuid.uuid4().hex),
    )


def m002_keyword_table(conn: Connection, tokenizer: str = FTS_TOKENIZER) -> None:
    """Create the FTS5 keyword table and remember which tokenizer built it.

    Chunks already present get their keyword rows (none in practice: m001 and m002 shipped
    together, but an upgrade must not leave chunks unsearchable).
    """
    conn.exec_driver_sql(_M002_FTS.format(tokenizer=tokenizer.replace("'", "''")))
    _fill_keyword_rows(conn)
    conn.exec_driver_sql(
        "INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)",
        (meta_table.TOKENIZER_KEY, tokenizer),
    )


def m003_vector_rowid_index(conn: Connection) -> None:
    """Index the rids of chunks that have a vector (the vector matrix refresh lists them)."""
    conn.exec_driver_sql(_M003)


def m004_vector_deletions(conn: Connection) -> None:
    """Log the rids of deleted vectors, so in-process matrices can drop them incrementally."""
    conn.exec_driver_sql(_M004)


def m005_issues(conn: Connection) -> None:
    """Keep the per-file problems of the last syncs with the index."""
    conn.exec_driver_sql(_M005)


def m006_keyword_statistics(conn: Connection) -> None:
    """Rebuild the keyword table so that deleting a row also updates bm25's statistics.

    The drifted statistics of the old table are dropped with it; the rows are rebuilt from
    `chunks.text` with the tokenizer recorded for the file (a file built with an older one is
    then rebuilt at open, as before), and the document analysis is recorded.
    """
    tokenizer = meta_table.get(conn, meta_table.TOKENIZER_KEY) or FTS_TOKENIZER
    conn.exec_driver_sql("DROP TABLE IF EXISTS chunks_fts")
    conn.exec_driver_sql(_M006_FTS.format(tokenizer=tokenizer.replace("'", "''")))
    _fill_keyword_rows(conn)
    meta_table.put(conn, meta_table.TOKENIZER_KEY, tokenizer)
    meta_table.put(conn, meta_table.FTS_DOCUMENT_KEY, FTS_DOCUMENT_VERSION)


def m007_chunk_times(conn: Connection) -> None:
    """Give every chunk its time range (`time_start`, `time_end`) and index it."""
    columns = {str(r[1]) for r in conn.exec_driver_sql("PRAGMA table_info(chunks)").all()}
    for statement in _M007:
        if statement.startswith("ALTER") and statement.split()[-2] in columns:
            continue  # run again after a crash between the two ALTERs' commit: harmless
        conn.exec_driver_sql(statement)


def m008_chunk_span_index(conn: Connection) -> None:
    """Index each chunk's span, so the longest one is an index lookup."""
    conn.exec_driver_sql(_M008)


def m009_chunk_context(conn: Connection) -> None:
    """Give every chunk the heading trail it is indexed with (`context`, "" until rebuilt)."""
    columns = {str(r[1]) for r in conn.exec_driver_sql("PRAGMA table_info(chunks)").all()}
    if "context" not in columns:
        conn.exec_driver_sql(_M009)


def m010_chunk_pieces(conn: Connection) -> None:
    """Make the table of note chunks' piece vectors (empty: the backfill fills it)."""
    conn.exec_driver_sql(_M010)


MIGRATIONS: Final[tuple[Migration, ...]] = (
    m001_core_tables,
    m002_keyword_table,
    m003_vector_rowid_index,
    m004_vector_deletions,
    m005_issues,
    m006_keyword_statistics,
    m007_chunk_times,
    m008_chunk_span_index,
    m009_chunk_context,
    m010_chunk_pieces,
)


def schema_version(conn: Connection) -> int:
    """Return the store schema version of the open file (0 for a new file)."""
    if not schema.table_exists(conn, "meta"):
        return 0
    value = meta_table.get(conn, meta_table.SCHEMA_VERSION_KEY)
    return 0 if value is None else int(value)


def migrate(conn: Connection, migrations: Sequence[Migration] = MIGRATIONS) -> list[str]:
    """Apply the migrations after the stored version; return the names applied.

    Raises SchemaTooNewError when the file's version is beyond `migrations`.
    """
    current = schema_version(conn)
    if current > len(migrations):
        raise SchemaTooNewError(
            f"store schema {current} is newer than this memlane ({len(migrations)})"
        )
    applied: list[str] = []
    conn.exec_driver_sql(_META)
    for number, migration in enumerate(migrations, start=1):
        if number <= current:
            continue
        migration(conn)
        meta_table.put(conn, meta_table.SCHEMA_VERSION_KEY, str(number))
        applied.append(migration.__name__)
    return applied
