"""One embedding cache for every unit, mode and data set of the harness.

Each unit has its own store, and a store's embedding cache only serves that store, so a full
re-run used to embed every unit's texts again, although LongMemEval's per-question haystacks
share most of their sessions and the vector modes of different sets share nothing but the
model. The shared cache is one SQLite file (`bench/work/embedding-cache.sqlite`, git-ignored)
keyed like a store's own cache: provider, model, provider key and the sha256 of the text, so a
vector is reused only for the same model and settings.

How a unit uses it (SQLite stores only): the unit syncs its keyword rows without waiting for
vectors, the shared cache seeds the store's cache with the vectors of the store's chunk hashes,
the vector backfill then embeds only what neither cache holds, and the store's cache goes back
into the shared one (`harvest`). The blobs are copied as the store wrote them.

`export` writes the whole cache to one SQLite file (compacted), `import_file` merges such a file
in (existing entries win): `python -m bench cache export|import FILE`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

from memlane.domain.hashing import sha256_text
from memlane.domain.note_pieces import has_pieces, note_pieces

CACHE_FILE = "embedding-cache.sqlite"

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS vectors ("
    "provider TEXT NOT NULL, model TEXT NOT NULL, provider_key TEXT NOT NULL, "
    "hash TEXT NOT NULL, embedding BLOB NOT NULL, dims INTEGER NOT NULL, "
    "PRIMARY KEY (provider, model, provider_key, hash)) WITHOUT ROWID"
)
_COLUMNS = "provider, model, provider_key, hash, embedding, dims"


class CacheFileError(Exception):
    """A file given to `import_file` is not a cache export."""


@dataclass(frozen=True, slots=True)
class KeyCount:
    provider: str
    model: str
    provider_key: str
    vectors: int


class SharedCache:
    """The harness's shared embedding cache at `path` (created on first use)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def in_work_dir(cls, work_dir: Path) -> SharedCache:
        return cls(work_dir / CACHE_FILE)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(self.path, timeout=60.0)) as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(_SCHEMA)
            with conn:
                yield conn

    def size(self) -> int:
        with self._connect() as conn:
            return int(conn.execute("SELECT count(*) FROM vectors").fetchone()[0])

    def counts_by_key(self) -> list[KeyCount]:
        """How many vectors each (provider, model, provider key) holds."""
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT provider, model, provider_key, count(*) FROM vectors "
                "GROUP BY provider, model, provider_key ORDER BY provider, model, provider_key"
            ).fetchall()
        return [KeyCount(str(p), str(m), str(k), int(n)) for p, m, k, n in rows]

    def harvest(self, store: Path) -> int:
        """Copy the store's cached vectors in (entries already held are kept); return how many
        were new. A store that does not exist yet gives nothing."""
        if not store.exists():
            return 0
        with self._connect() as conn:
            conn.execute("ATTACH DATABASE ? AS store", (str(store),))
            try:
                before = conn.total_changes
                conn.execute(
                    f"INSERT OR IGNORE INTO main.vectors ({_COLUMNS}) "
                    f"SELECT {_COLUMNS} FROM store.embedding_cache"
                )
                return conn.total_changes - before
            finally:
                conn.commit()
                conn.execute("DETACH DATABASE store")

    def seed(self, store: Path) -> int:
        """Put into the store's own cache the vectors held here for the store's chunk texts and
        its note chunks' pieces (any provider key: the store only reads its own); return how
        many were added."""
        if not store.exists():
            return 0
        pieces = piece_hashes(store)
        with self._connect() as conn:
            conn.execute("ATTACH DATABASE ? AS store", (str(store),))
            conn.execute("CREATE TEMP TABLE IF NOT EXISTS piece_hashes (hash TEXT PRIMARY KEY)")
            conn.execute("DELETE FROM temp.piece_hashes")
            conn.executemany(
                "INSERT OR IGNORE INTO temp.piece_hashes VALUES (?)", [(h,) for h in pieces]
            )
            try:
                clock = conn.execute(
                    "SELECT coalesce(max(last_used), 0) + 1 FROM store.embedding_cache"
                ).fetchone()[0]
                before = conn.total_changes
                conn.execute(
                    f"INSERT OR IGNORE INTO store.embedding_cache ({_COLUMNS}, last_used) "
                    f"SELECT {_COLUMNS}, ? FROM main.vectors "
                    "WHERE hash IN (SELECT DISTINCT hash FROM store.chunks) "
                    "OR hash IN (SELECT hash FROM temp.piece_hashes)",
                    (clock,),
                )
                return conn.total_changes - before
            finally:
                conn.commit()
                conn.execute("DETACH DATABASE store")

    def export(self, target: Path) -> int:
        """Write the whole cache to `target` (a new SQLite file); return the vectors written."""
        if target.exists():
            raise FileExistsError(f"{target} exists: export writes a new file")
        target.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as conn:
            count = int(conn.execute("SELECT count(*) FROM vectors").fetchone()[0])
            conn.commit()
            conn.execute("VACUUM INTO ?", (str(target),))
        return count

    def import_file(self, source: Path) -> int:
        """Merge an exported cache file in (entries already held win); return how many were new."""
        if not source.is_file():
            raise CacheFileError(f"{source}: no such file")
        try:
            with closing(sqlite3.connect(f"file:{source}?mode=ro", uri=True)) as probe:
                tables = {r[0] for r in probe.execute("SELECT name FROM sqlite_master")}
        except sqlite3.DatabaseError as exc:
            raise CacheFileError(f"{source}: not a cache export ({exc})") from exc
        if "vectors" not in tables:
            raise CacheFileError(f"{source}: not a cache export (no `vectors` table)")
        with self._connect() as conn:
            conn.execute("ATTACH DATABASE ? AS other", (str(source),))
            try:
                before = conn.total_changes
                conn.execute(
                    f"INSERT OR IGNORE INTO main.vectors ({_COLUMNS}) "
                    f"SELECT {_COLUMNS} FROM other.vectors"
                )
                return conn.total_changes - before
            finally:
                conn.commit()
                conn.execute("DETACH DATABASE other")


def store_cache_size(store: Path) -> int:
    """Vectors in a store's own embedding cache (0 before the store exists)."""
    if not store.exists():
        return 0
    with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=60.0)) as conn:
        return int(conn.execute("SELECT count(*) FROM embedding_cache").fetchone()[0])


def piece_hashes(store: Path) -> set[str]:
    """The hashes of a store's note chunks' pieces (domain/note_pieces.py), which the vector
    backfill embeds after the chunks."""
    with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=60.0)) as conn:
        rows = conn.execute("SELECT source, text FROM chunks").fetchall()
    return {
        sha256_text(piece)
        for source, text in rows
        if has_pieces(source)
        for piece in note_pieces(text)
    }


def chunk_hashes(store: Path) -> set[str]:
    """The distinct chunk-text hashes of a store (what its vector leg needs embedded)."""
    with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=60.0)) as conn:
        return {str(r[0]) for r in conn.execute("SELECT DISTINCT hash FROM chunks")}
