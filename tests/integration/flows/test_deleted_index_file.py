"""An index file deleted under a running process (a state folder removed to start over): SQLite
goes on with the open, deleted file, so `status` must say it; real files, real SQLite store."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memlane.entrypoints.api import open_manager

pytestmark = pytest.mark.integration


def test_status_says_the_index_file_was_deleted_while_open(tmp_path: Path) -> None:
    workspace, state = tmp_path / "ws", tmp_path / "state"
    workspace.mkdir()
    (workspace / "MEMORY.md").write_text("# Notes\n\nThe deploy runs on Fridays.\n")
    manager = open_manager(
        workspace=workspace, state_dir=state, config={"provider": "none"}, env={}
    )
    try:
        manager.sync()
        assert manager.status().warnings == ()

        shutil.rmtree(state / "agents")  # the folder holding the index file

        (warning,) = manager.status().warnings
        assert "was deleted while memlane had it open" in warning
        assert manager.status().store_path in warning
        assert manager.search("deploy Fridays").results  # still answers from the open copy
    finally:
        manager.close()
