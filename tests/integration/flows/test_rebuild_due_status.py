"""`status` says when the next sync will rebuild the whole index: an index cut into chunks by an
older memlane (an upgrade) or built with other chunk sizes. It said "dirty: no", and the next
search blocked on the rebuild without a word of why. Real files, real SQLite store."""

from __future__ import annotations

from pathlib import Path

import pytest

from memlane.application import wanted_meta
from memlane.application.memory import MemoryManager
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
