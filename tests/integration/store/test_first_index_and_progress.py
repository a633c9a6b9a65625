"""SQLite: the record of a first index written by another process, and the vector progress
count kept per database state (counted again only after another process's write)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from memlane.adapters.store import first_index, meta_table
from memlane.adapters.store.database import SqliteDatabase
from memlane.adapters.store.processes import host_tag
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.adapters.store.vector_progress import vector_progress
from memlane.application.ports.index_store import VectorProgress
from memlane.domain.index_meta import (
    CHUNKER_VERSION,
    KEYWORD_ONLY_MODEL,
    SCHEMA_VERSION,
    IndexMeta,
    index_meta_to_json,
)
from tests.integration.store.helpers import DIMS, make_chunks, make_file

pytestmark = pytest.mark.integration

MODEL = "m"


def meta(dimensions: int | None = DIMS) -> IndexMeta:
    return IndexMeta(
        schema_version=SCHEMA_VERSION,
        chunker_version=CHUNKER_VERSION,
        sources=("memory",),
        scope_hash="scope",
        chunk_tokens=400,
        chunk_overlap=80,
        provider="fake",
        model=MODEL,
        provider_key="k",
        dimensions=dimensions,
    )


def vec(i: int, dims: int = DIMS) -> list[float]:
    return [1.0 if j == i % dims else 0.1 for j in range(dims)]


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "index.db"


@pytest.fixture
def store(path: Path) -> Iterator[SqliteIndexStore]:
    s = SqliteIndexStore(SqliteDatabase.open(path))
    yield s
    s.close()


def record_owner(store: SqliteIndexStore, owner: str) -> None:
    """Write the record as another process would have (its writer named `owner`)."""
    value = json.dumps({"owner": owner, "files": 5, "meta": index_meta_to_json(meta())})
    store.database.write(lambda conn: meta_table.put(conn, first_index.FIRST_INDEX_KEY, value))


class TestAnotherWriter:
    def test_a_living_writer_keeps_its_claim(self, store: SqliteIndexStore) -> None:
        other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        try:
            record_owner(store, f"{host_tag()}-{other.pid}")
            state = store.first_index()
            assert state is not None
            assert state.running is True and not state.here and state.running_elsewhere
            assert store.claim_first_index(meta(), 9) is False
            assert (store.first_index() or state).files_total == 5  # nothing written
        finally:
            other.kill()
            other.wait()

    def test_a_dead_writer_is_an_interrupted_first_index_anyone_may_resume(
        self, store: SqliteIndexStore
    ) -> None:
        gone = subprocess.Popen([sys.executable, "-c", "pass"])
        assert gone.wait() == 0  # reaped: its pid names no process now
        record_owner(store, f"{host_tag()}-{gone.pid}")
        state = store.first_index()
        assert state is not None and state.running is False and not state.running_elsewhere
        assert store.claim_first_index(meta(), 9) is True
        state = store.first_index()
        assert state is not None and state.here and state.files_total == 9

    def test_a_writer_of_another_host_cannot_hold_it(self, store: SqliteIndexStore) -> None:
        # WAL needs every process of a database on one host: a record of another is stale.
        record_owner(store, f"{'0' * 8 if host_tag() != '0' * 8 else '1' * 8}-1")
        state = store.first_index()
        assert state is not None and state.running is False
        assert store.claim_first_index(meta(), 9) is True


class _Counts:
    """The vector-progress count statements a store's engine runs."""

    def __init__(self, store: SqliteIndexStore) -> None:
        self.statements = 0
        event.listen(store.database.engine, "before_cursor_execute", self._seen)

    def _seen(self, _conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        if "model < ? OR model > ?" in statement:
            self.statements += 1


def fresh(path: Path, model: str = MODEL) -> VectorProgress:
    """The count made from scratch by a new connection (what the kept count must equal)."""
    db = SqliteDatabase.open(path)
    try:
        with db.read() as conn:
            return vector_progress(conn, model)
    finally:
        db.close()


class TestProgressKeptPerState:
    def test_own_writes_carry_the_count_and_another_process_s_write_recounts(
        self, store: SqliteIndexStore, path: Path
    ) -> None:
        store.set_meta(meta())
        for n in range(3):
            name = f"memory/{n}.md"
            store.replace_file(
                make_file(name), make_chunks(name, 4), [None] * 4, KEYWORD_ONLY_MODEL
            )
        counts = _Counts(store)

        assert store.vector_progress(MODEL) == VectorProgress(done=0, total=12) == fresh(path)
        assert store.vector_progress(MODEL) == VectorProgress(done=0, total=12)
        assert counts.statements == 1  # the second search of an unchanged index counts nothing

        # This store's own writes (a backfill batch, a first index's file, a removed file)
        # move the kept count without counting again.
        chunks = make_chunks("memory/0.md", 4)
        store.set_vectors(MODEL, {c.id: vec(i) for i, c in enumerate(chunks[:3])})
        assert store.vector_progress(MODEL) == VectorProgress(done=3, total=12) == fresh(path)
        store.set_vectors(MODEL, {chunks[0].id: vec(5)})  # a chunk that had one already
        assert store.vector_progress(MODEL) == VectorProgress(done=3, total=12) == fresh(path)
        store.set_vectors("other", {chunks[1].id: vec(1)})  # another model takes one away
        assert store.vector_progress(MODEL) == VectorProgress(done=2, total=12) == fresh(path)
        new = make_chunks("memory/new.md", 3)
        store.replace_file(make_file("memory/new.md"), new, [vec(0), None, vec(2)], MODEL)
        assert store.vector_progress(MODEL) == VectorProgress(done=4, total=15) == fresh(path)
        store.replace_file(
            make_file("memory/0.md", version="v2"),
            make_chunks("memory/0.md", 2, "v2"),
            [None, None],
            KEYWORD_ONLY_MODEL,
        )
        assert store.vector_progress(MODEL) == VectorProgress(done=2, total=13) == fresh(path)
        store.delete_file("memory", "memory/new.md")
        assert store.vector_progress(MODEL) == VectorProgress(done=0, total=10) == fresh(path)
        assert counts.statements == 1

        # Another process's write moves the generation: counted again, once.
        other = SqliteIndexStore(SqliteDatabase.open(path))
        try:
            ones = make_chunks("memory/1.md", 4)
            other.set_vectors(MODEL, {c.id: vec(i) for i, c in enumerate(ones)})
        finally:
            other.close()
        assert store.vector_progress(MODEL) == VectorProgress(done=4, total=10) == fresh(path)
        assert store.vector_progress(MODEL) == VectorProgress(done=4, total=10)
        assert counts.statements == 2

        # Another model asked for, a dimension change dropping vectors: counted again.
        assert store.vector_progress("other") == fresh(path, "other")
        store.set_meta(meta(dimensions=DIMS + 1))
        assert store.vector_progress(MODEL) == VectorProgress(done=0, total=10) == fresh(path)

    def test_a_swapped_in_rebuild_is_counted_again(
        self, store: SqliteIndexStore, path: Path
    ) -> None:
        store.set_meta(meta())
        store.replace_file(
            make_file("memory/a.md"),
            make_chunks("memory/a.md", 2),
            [None, None],
            KEYWORD_ONLY_MODEL,
        )
        assert store.vector_progress(MODEL) == VectorProgress(done=0, total=2)
        rebuild = store.begin_rebuild()
        rebuild.replace_file(
            make_file("memory/b.md"), make_chunks("memory/b.md", 3), [vec(0), vec(1), None], MODEL
        )
        rebuild.set_meta(meta())
        rebuild.commit()
        assert store.vector_progress(MODEL) == VectorProgress(done=2, total=3) == fresh(path)
