"""The code-file vector engine ranks exactly like the exact matrix, through writes, stale or
foreign files, restored databases and a builder killed mid-write."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from memlane.adapters.store import code_file_place
from memlane.adapters.store.code_file_place import code_path
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.adapters.store.vector_codes import CodeFile
from memlane.domain.chunks import ChunkId
from memlane.domain.sources import ALL_SOURCES, Source
from tests.integration.store.helpers import DIMS, make_chunks, make_file

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def _index_every_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """Build the code file at any size (the default keeps small indexes exact, no file)."""
    monkeypatch.setattr(code_file_place, "MIN_ROWS", 0)


def _vector(rng: random.Random) -> list[float]:
    return [rng.uniform(-1, 1) for _ in range(DIMS)]


def _top(store: SqliteIndexStore, query: list[float], limit: int = 15) -> list[tuple[str, float]]:
    hits = store.search_vector(query, model="m", sources=ALL_SOURCES, limit=limit)
    return [(h.chunk_id, round(h.score, 6)) for h in hits]


def _exact(path: Path, query: list[float], limit: int = 15) -> list[tuple[str, float]]:
    store = SqliteIndexStore.open(path, vector_search="numpy")
    try:
        return _top(store, query, limit)
    finally:
        store.close()


def _fill(
    store: SqliteIndexStore, files: int, per_file: int, seed: int, source: Source = "memory"
) -> None:
    rng = random.Random(seed)
    for f in range(files):
        name = f"{source}/s{seed}-f{f}.md"
        chunks = make_chunks(name, per_file, source=source)
        store.replace_file(
            make_file(name, source=source), chunks, [_vector(rng) for _ in chunks], "m"
        )


class TestSameRankingAsTheExactEngine:
    def test_through_replaces_deletes_and_new_vectors(self, tmp_path: Path) -> None:
        path = tmp_path / "index.db"
        writer = SqliteIndexStore.open(path, vector_search="numpy")
        reader = SqliteIndexStore.open(path)
        rng = random.Random(11)
        _fill(writer, 20, 6, seed=1)
        for step in range(30):
            name = f"memory/f{rng.randrange(12)}.md"
            action = rng.random()
            if action < 0.6:
                chunks = make_chunks(name, rng.randrange(1, 6), version=f"v{step}")
                writer.replace_file(make_file(name), chunks, [_vector(rng) for _ in chunks], "m")
            elif action < 0.8:
                writer.delete_file("memory", name)
            else:
                targets = [c.id for c in writer.chunks_without_vectors("other", limit=3)]
                writer.set_vectors("m", {ChunkId(t): _vector(rng) for t in targets})
            query = _vector(rng)
            assert _top(reader, query) == _exact(path, query)
        assert CodeFile.open(code_path(path)) is not None
        writer.close()
        reader.close()

    def test_when_the_scan_prunes_and_sources_filter(self, tmp_path: Path) -> None:
        """Thousands of rows: the Hamming stage keeps 4000, the int8 stage 200."""
        path = tmp_path / "index.db"
        store = SqliteIndexStore.open(path)
        _fill(store, 250, 20, seed=3)
        _fill(store, 50, 20, seed=4, source="sessions")
        rng = random.Random(5)
        for _ in range(20):
            query = _vector(rng)
            assert _top(store, query, 10) == _exact(path, query, 10)
            got = store.search_vector(query, model="m", sources=["sessions"], limit=10)
            assert [h.source for h in got] == ["sessions"] * 10
        store.close()


class TestTheFileIsDerivedAndChecked:
    def test_a_fresh_process_reuses_the_file_and_sees_new_rows_without_a_rebuild(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "index.db"
        first = SqliteIndexStore.open(path)
        _fill(first, 10, 5, seed=1)
        query = _vector(random.Random(2))
        first.search_vector(query, model="m", sources=ALL_SOURCES, limit=5)
        built = code_path(path).stat().st_ino
        first.replace_file(
            make_file("memory/new.md"), make_chunks("memory/new.md", 1), [query], "m"
        )
        first.close()

        second = SqliteIndexStore.open(path)
        hits = second.search_vector(query, model="m", sources=ALL_SOURCES, limit=5)
        assert hits[0].path == "memory/new.md"
        assert code_path(path).stat().st_ino == built
        second.delete_file("memory", "memory/new.md")
        assert "memory/new.md" not in {h.path for h in second.search_vector(query, model="m", sources=ALL_SOURCES, limit=5)}  # fmt: skip
        assert _top(second, query) == _exact(path, query)
        second.close()

    def test_a_deleted_row_inside_the_file_is_never_returned(self, tmp_path: Path) -> None:
        path = tmp_path / "index.db"
        store = SqliteIndexStore.open(path)
        rng = random.Random(9)
        target = _vector(rng)
        store.replace_file(make_file("memory/t.md"), make_chunks("memory/t.md", 1), [target], "m")
        _fill(store, 10, 5, seed=1)
        assert store.search_vector(target, model="m", sources=ALL_SOURCES, limit=1)[0].path == "memory/t.md"  # fmt: skip
        store.delete_file("memory", "memory/t.md")
        assert _top(store, target) == _exact(path, target)
        store.close()

    @pytest.mark.parametrize("damage", ["foreign", "truncated", "garbage"])
    def test_a_foreign_or_damaged_file_is_rebuilt(self, tmp_path: Path, damage: str) -> None:
        other = tmp_path / "other.db"
        foreign = SqliteIndexStore.open(other)
        _fill(foreign, 10, 5, seed=8)
        foreign.search_vector(_vector(random.Random(1)), model="m", sources=ALL_SOURCES, limit=3)
        foreign.close()
        path = tmp_path / "index.db"
        store = SqliteIndexStore.open(path, vector_search="numpy")
        _fill(store, 10, 5, seed=1)
        store.close()
        target = code_path(path)
        shutil.copy(code_path(other), target)
        if damage == "truncated":
            os.truncate(target, target.stat().st_size - 10)
        elif damage == "garbage":
            target.write_bytes(b"\0" * 4096)
        query = _vector(random.Random(4))
        reader = SqliteIndexStore.open(path)
        assert _top(reader, query) == _exact(path, query)
        reopened = CodeFile.open(target)
        assert reopened is not None and reopened.header.count == 50
        reader.close()

    def test_a_database_restored_from_an_older_copy_does_not_trust_the_file(
        self, tmp_path: Path
    ) -> None:
        """The restored copy reuses rids the file holds with other vectors: the file is stale."""
        path = tmp_path / "index.db"
        store = SqliteIndexStore.open(path)
        _fill(store, 5, 5, seed=1)
        store.close()
        backup = tmp_path / "backup.db"
        shutil.copy(path, backup)
        store = SqliteIndexStore.open(path)
        _fill(store, 5, 5, seed=2)
        store.search_vector(_vector(random.Random(1)), model="m", sources=ALL_SOURCES, limit=3)
        store.close()
        shutil.copy(backup, path)
        store = SqliteIndexStore.open(path, vector_search="numpy")
        _fill(store, 5, 5, seed=3)  # same rids as seed=2's rows, other vectors
        store.close()
        rng = random.Random(6)
        reader = SqliteIndexStore.open(path)
        for _ in range(5):
            query = _vector(rng)
            assert _top(reader, query) == _exact(path, query)
        reader.close()


# The child builds the code file of an existing index, pausing inside the build (after the first
# batch has been written to its temporary file) so that the parent's SIGKILL lands mid-write.
_CHILD = """
import sys, time
from memlane.adapters.store import code_file_place, vector_codes
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore

code_file_place.MIN_ROWS = 0
vector_codes._SAMPLE = vector_codes._BATCH = 50
real_pack = vector_codes._pack_bits

def slow_pack(block, mean):
    print("encoding", flush=True)
    time.sleep(0.5)
    return real_pack(block, mean)

vector_codes._pack_bits = slow_pack
store = SqliteIndexStore.open(sys.argv[1])
store.search_vector([1.0] * 8, model="m", sources=["memory", "sessions"], limit=3)
print("done", flush=True)
"""


class TestKilledBuilder:
    @pytest.mark.parametrize("had_file", [False, True])
    def test_a_builder_killed_mid_write_leaves_no_wrong_file(
        self, tmp_path: Path, had_file: bool
    ) -> None:
        path = tmp_path / "index.db"
        store = SqliteIndexStore.open(path)
        _fill(store, 20, 10, seed=1)
        before = b""
        if had_file:
            store.search_vector([1.0] * DIMS, model="m", sources=ALL_SOURCES, limit=3)
            before = code_path(path).read_bytes()
            _fill(store, 40, 10, seed=2)  # enough new rows that the next reader rebuilds
        store.close()

        env = {**os.environ, "PYTHONPATH": str(Path.cwd())}
        child = subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(path)], stdout=subprocess.PIPE, text=True, env=env
        )
        assert child.stdout is not None
        encoding = 0
        for line in child.stdout:  # structlog's lines come first
            encoding += line.strip() == "encoding"
            if encoding == 2:  # the first batch is in the temporary file, the second is coming
                break
        assert encoding == 2
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
        child.stdout.close()

        leftovers = list(tmp_path.glob("index.db.vcodes.tmp-*"))
        assert leftovers, "the kill should have landed inside the build"
        if had_file:
            assert code_path(path).read_bytes() == before
        else:
            assert not code_path(path).exists()
        rng = random.Random(3)
        reader = SqliteIndexStore.open(path)
        for _ in range(5):
            query = _vector(rng)
            assert _top(reader, query) == _exact(path, query)
        reader.close()
        assert not any(p.exists() for p in leftovers)  # the next build removed them
        assert CodeFile.open(code_path(path)) is not None


class TestSmallIndexesStayExact:
    def test_no_file_below_min_rows_then_one_once_the_index_grows(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(code_file_place, "MIN_ROWS", 30)
        path = tmp_path / "index.db"
        store = SqliteIndexStore.open(path)
        _fill(store, 4, 5, seed=1)
        query = _vector(random.Random(2))
        assert _top(store, query) == _exact(path, query)
        assert not code_path(path).exists()
        _fill(store, 4, 5, seed=2)  # 40 vectors now
        assert _top(store, query) == _exact(path, query)
        opened = CodeFile.open(code_path(path))
        assert opened is not None and opened.header.count == 40
        store.close()


class TestStatusShowsTheFile:
    def test_missing_built_newer_rows_stale_and_rebuilt(self, tmp_path: Path) -> None:
        path = tmp_path / "index.db"
        store = SqliteIndexStore.open(path)
        _fill(store, 10, 5, seed=1)
        assert store.vector_index_state().state == "none: 50 vectors, built by the next search"
        assert not code_path(path).exists()  # status builds nothing
        store.search_vector(_vector(random.Random(2)), model="m", sources=ALL_SOURCES, limit=3)
        assert store.vector_index_state().vectors == 50
        store.close()

        fresh = SqliteIndexStore.open(path)  # a status in a process that has not searched
        _fill(fresh, 1, 3, seed=5)
        state = fresh.vector_index_state()
        assert (state.engine, state.vectors) == ("codes", 50)
        assert state.state == "built, 3 newer vectors searched exactly"
        fresh.close()

        other = tmp_path / "other.db"
        foreign = SqliteIndexStore.open(other)
        _fill(foreign, 4, 5, seed=8)
        foreign.search_vector(_vector(random.Random(1)), model="m", sources=ALL_SOURCES, limit=3)
        foreign.close()
        shutil.copy(code_path(other), code_path(path))
        reader = SqliteIndexStore.open(path)
        stale = reader.vector_index_state()
        assert stale.state.startswith("stale: it was built from another database file")
        reader.search_vector(_vector(random.Random(3)), model="m", sources=ALL_SOURCES, limit=3)
        rebuilt = reader.vector_index_state()
        assert rebuilt.vectors == 53
        assert rebuilt.state.startswith("rebuilt: it was built from another database file")
        reader.close()

    def test_below_the_size_that_gets_a_file(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(code_file_place, "MIN_ROWS", 100)
        store = SqliteIndexStore.open(tmp_path / "index.db")
        _fill(store, 2, 5, seed=1)
        state = store.vector_index_state()
        assert (state.vectors, state.state) == (None, "exact: 10 vectors, below 100")
        numpy = SqliteIndexStore.open(tmp_path / "index.db", vector_search="numpy")
        assert numpy.vector_index_state().engine == "numpy"
        numpy.close()
        store.close()
