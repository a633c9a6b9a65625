"""Crash safety: a process SIGKILLed mid-write leaves a consistent index with nothing lost."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.domain.sources import ALL_SOURCES
from tests.integration.store.helpers import consistency, make_chunks, make_file, make_vectors

pytestmark = pytest.mark.integration

CHUNKS_PER_FILE = 12

# The child writes forever and reports each committed step on stdout; the parent kills it.
_CHILD = """
import sys
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from tests.integration.store.helpers import make_chunks, make_file, make_vectors

path, mode = sys.argv[1], sys.argv[2]
store = SqliteIndexStore.open(path)
if mode == "replace":
    n = 0
    while True:
        name = f"memory/f{n % 40}.md"
        store.replace_file(
            make_file(name, version=f"v{n}"), make_chunks(name, 12, version=f"v{n}"),
            make_vectors(12, n), "m",
        )
        print(f"committed {n} {name}", flush=True)
        n += 1
else:
    rebuild = store.begin_rebuild()
    for n in range(int(sys.argv[3])):
        name = f"memory/new{n}.md"
        chunks = make_chunks(name, 12, "new")
        rebuild.replace_file(make_file(name), chunks, make_vectors(12, n), "m")
        print(f"built {n}", flush=True)
    print("committing", flush=True)
    rebuild.commit()
    print("committed", flush=True)
"""


def _spawn(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(Path.cwd())}
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, *args], stdout=subprocess.PIPE, text=True, env=env
    )


def _kill_after(child: subprocess.Popen[str], marker: str, delay: float = 0.0) -> list[str]:
    lines: list[str] = []
    assert child.stdout is not None
    for line in child.stdout:
        lines.append(line.strip())
        if line.startswith(marker):
            break
    time.sleep(delay)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    child.stdout.close()
    return lines


def _seed_old_index(path: Path, files: int = 5) -> None:
    store = SqliteIndexStore.open(path)
    for n in range(files):
        name = f"memory/old{n}.md"
        store.replace_file(
            make_file(name, version="old"),
            make_chunks(name, CHUNKS_PER_FILE, "old"),
            make_vectors(CHUNKS_PER_FILE, n),
            "m",
        )
    store.close()


class TestKilledDuringReplace:
    def test_every_committed_file_survives_whole(self, tmp_path: Path) -> None:
        """Each file has all rows of exactly one version; the last committed ones are there."""
        db = tmp_path / "index.db"
        _seed_old_index(db, files=1)
        child = _spawn(str(db), "replace")

        lines = _kill_after(child, "committed 60")

        consistency(db)
        store = SqliteIndexStore.open(db)
        last_version: dict[str, str] = {}
        for line in lines:
            _, n, name = line.split()
            last_version[name] = f"v{n}"
        for name, version in last_version.items():
            indexed = store.file("memory", name)
            assert indexed is not None
            # The kill may land after a later commit than the last line read: never before it.
            assert int(indexed.hash.split("@v")[1]) >= int(version[1:])
        stored_ids = {c.id for c in store.chunks_without_vectors("no-such-model", limit=10_000)}
        for f in store.files():
            assert [c.source for c in store.counts()] == ["memory"]
            version = f.hash.split("@")[1]
            chunk_ids = {f"{f.path}#{version}#{i}" for i in range(CHUNKS_PER_FILE)}
            assert chunk_ids <= stored_ids
        assert store.search_keyword('"topic3"', sources=ALL_SOURCES, limit=5)
        assert store.search_vector(
            make_vectors(1, 0)[0] or [], model="m", sources=ALL_SOURCES, limit=5
        )
        store.close()


class TestKilledDuringRebuild:
    def test_kill_while_building_keeps_the_old_index(self, tmp_path: Path) -> None:
        """The live file is untouched while the rebuild writes its temporary database."""
        db = tmp_path / "index.db"
        _seed_old_index(db)
        child = _spawn(str(db), "rebuild", "500")

        _kill_after(child, "built 20")

        assert consistency(db)["chunks"] == 5 * CHUNKS_PER_FILE
        assert list(tmp_path.glob("index.db.tmp-*"))  # the killed builder's temporary database
        store = SqliteIndexStore.open(db)
        assert sorted(f.path for f in store.files()) == [f"memory/old{n}.md" for n in range(5)]
        assert not list(tmp_path.glob("index.db.tmp-*"))  # removed when the index was opened
        store.close()

    @pytest.mark.parametrize("delay", [0.0, 0.02, 0.08])
    def test_kill_while_committing_gives_old_or_new_whole(
        self, tmp_path: Path, delay: float
    ) -> None:
        """A kill during the swap leaves either the complete old or the complete new index."""
        db = tmp_path / "index.db"
        _seed_old_index(db)
        child = _spawn(str(db), "rebuild", "60")

        _kill_after(child, "committing", delay)

        counts = consistency(db)
        store = SqliteIndexStore.open(db)
        paths = sorted(f.path for f in store.files())
        assert paths in (
            [f"memory/old{n}.md" for n in range(5)],
            sorted(f"memory/new{n}.md" for n in range(60)),
        )
        assert counts["chunks"] == len(paths) * CHUNKS_PER_FILE
        assert store.search_keyword('"topic1"', sources=ALL_SOURCES, limit=3)
        store.close()
