"""`status` says when the next sync will rebuild the whole index: an index cut into chunks by an
older memlane (an upgrade) or built with other chunk sizes. It said "dirty: no", and the next
search blocked on the rebuild without a word of why. Real files, real SQLite store."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memlane.application import wanted_meta
from memlane.application.memory import MemoryManager
from memlane.application.sync_refusal import IndexFromNewerMemlane
from memlane.domain.index_meta import CHUNKER_VERSION
from memlane.entrypoints.api import open_manager

pytestmark = pytest.mark.integration


def _open(tmp_path: Path, **config: object) -> MemoryManager:
    return open_manager(
        workspace=tmp_path / "ws",
        state_dir=tmp_path / "state",
        config={"provider": "none", **config},
        env={},
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "MEMORY.md").write_text("# Notes\n\nThe deploy runs on Fridays.\n")
    return tmp_path


def test_an_index_chunked_by_an_older_memlane_is_said_to_be_rebuilt_next(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as older:
        older.setattr(wanted_meta, "CHUNKER_VERSION", CHUNKER_VERSION - 1)
        with _open(workspace) as manager:
            manager.sync()

    with _open(workspace) as manager:  # this memlane, before any sync
        status = manager.status()
        assert status.dirty
        (warning,) = status.warnings
        assert warning.startswith("the next sync rebuilds the whole index: another memlane")
        assert f"(chunker {CHUNKER_VERSION - 1}, this one {CHUNKER_VERSION})" in warning

        assert manager.sync().full_reindex
        after = manager.status()
        assert (after.dirty, after.warnings) == (False, ())


def test_changed_chunk_sizes_are_said_too(workspace: Path) -> None:
    with _open(workspace) as manager:
        manager.sync()

    with _open(workspace, chunking={"tokens": 300}) as manager:
        (warning,) = manager.status().warnings
        assert "the chunk sizes in the configuration changed" in warning


def test_an_index_in_the_wanted_shape_says_nothing(workspace: Path) -> None:
    with _open(workspace) as manager:
        manager.sync()

    with _open(workspace) as manager:
        status = manager.status()
        assert (status.dirty, status.warnings) == (False, ())


def test_a_deep_status_counts_the_files_changed_since_they_were_indexed(workspace: Path) -> None:
    """A fresh process has seen no change: `status --deep` looks as the next sync would (it
    said "dirty: no" beside a note edited after the last sync)."""
    with _open(workspace) as manager:
        manager.sync()
    (workspace / "ws" / "MEMORY.md").write_text("# Notes\n\nThe deploy moved to Mondays.\n")
    (workspace / "ws" / "memory").mkdir()
    (workspace / "ws" / "memory" / "new.md").write_text("# New\n\nA new note.\n")

    with _open(workspace) as manager:
        assert not manager.status().dirty  # without looking, nothing is known
        deep = manager.status(deep=True)
        assert deep.dirty
        assert "2 file(s) changed on disk since they were indexed" in " ".join(deep.warnings)
        assert manager.sync().files_indexed == 2
        assert not manager.status(deep=True).dirty


def _built_by_a_newer_memlane(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as newer:
        newer.setattr(wanted_meta, "CHUNKER_VERSION", CHUNKER_VERSION + 1)
        with _open(workspace) as manager:
            manager.sync()
    (workspace / "ws" / "memory").mkdir()
    (workspace / "ws" / "memory" / "new.md").write_text("# New\n\nThe ingest service moved.\n")


def test_an_index_of_a_newer_memlane_is_searched_as_it_is_not_rebuilt_down(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two memlane versions sharing a state dir took turns rebuilding the index to their own
    chunking, embedding every chunk again each time."""
    _built_by_a_newer_memlane(workspace, monkeypatch)
    said = f"built by a newer memlane (chunker {CHUNKER_VERSION + 1}, this one {CHUNKER_VERSION})"

    with _open(workspace) as manager:
        (warning,) = manager.status().warnings
        assert said in warning and "index --force" in warning
        with pytest.raises(IndexFromNewerMemlane):
            manager.sync()
        found = manager.search("deploy")
        assert [r.path for r in found.results] == ["MEMORY.md"]
        assert any(said in w for w in found.warnings)
        meta = manager.status()
    assert meta.files == 1  # the new note waits for the newer memlane

    with _open(workspace) as manager:
        assert manager.sync(force=True).full_reindex  # on purpose
        after = manager.status()
        assert (after.files, after.warnings) == (2, ())


def test_the_cli_says_it_and_the_search_still_answers(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _built_by_a_newer_memlane(workspace, monkeypatch)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env.update(HOME=str(workspace), MEMLANE_PROVIDER="none")
    where = ["--state-dir", str(workspace / "state"), "--workspace", str(workspace / "ws")]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "memlane.entrypoints", *where, *args],
            capture_output=True, text=True, env=env, timeout=120, check=False,
        )  # fmt: skip

    indexed = run("index")
    searched = run("search", "deploy")

    assert indexed.returncode == 1
    assert "built by a newer memlane" in indexed.stderr and "index --force" in indexed.stderr
    assert "Traceback" not in indexed.stderr
    assert searched.returncode == 0 and "MEMORY.md" in searched.stdout
    assert "built by a newer memlane" in searched.stderr
