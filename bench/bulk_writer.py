"""Bench helper: fill a SQLite index store fast, for the benchmarks that build 100k+ chunks.

The store's own row writes (the rows a sync writes), 10k chunks per transaction, instead of one
`replace_file` per file; sqlite-vec's mirror is not written (it is flagged stale), so a million
chunks fit in a session. Used by store_bench.py (`--bulk`) and time_filter_bench.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from memlane.adapters.store import meta_table, rows
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.adapters.store.vec0 import Vec0Table
from memlane.application.ports.index_store import IndexedFile
from memlane.domain.chunks import Chunk

CHUNKS_PER_TRANSACTION = 10_000


class BulkWriter:
    """Collects (chunk, vector, model) rows and their files; writes them in large transactions."""

    def __init__(self, store: SqliteIndexStore, dims: int) -> None:
        self._store = store
        self._dims = dims
        self._pending: list[tuple[Chunk, list[float], str]] = []
        self._files: list[IndexedFile] = []

    def add(self, chunks: Iterable[tuple[Chunk, list[float], str]], file: IndexedFile) -> None:
        """One file and its chunks; written once 10k chunks are waiting."""
        self._pending.extend(chunks)
        self._files.append(file)
        if len(self._pending) >= CHUNKS_PER_TRANSACTION:
            self.flush()

    def flush(self) -> None:
        """Write what is waiting, in one transaction."""
        if not self._pending and not self._files:
            return
        table = Vec0Table(self._store.database)

        def work(conn: Any) -> None:
            table.ensure_dims(conn, self._dims)
            rows.insert_chunks(conn, self._pending, rows.now(conn), table)
            for file in self._files:
                rows.put_file(conn, file)
            meta_table.bump_generation(conn)

        self._store.database.write(work)
        self._pending.clear()
        self._files.clear()
