"""A query that is not valid UTF-8 is refused before it reaches the embedding provider, so it
is never taken for a provider failure (real SQLite store, the bundled local model)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memlane.domain.errors import InvalidQuery
from memlane.entrypoints.api import open_manager

pytestmark = pytest.mark.integration


def test_the_query_is_refused_and_the_provider_stays_well(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "MEMORY.md").write_text("# Deploys\nWe deploy on Tuesdays.\n")
    with open_manager(
        workspace=tmp_path / "ws",
        state_dir=tmp_path / "state",
        config={"provider": "local"},
        env={"HOME": str(tmp_path)},
    ) as manager:
        manager.sync()
        with pytest.raises(InvalidQuery, match="not valid UTF-8 text"):
            manager.search(os.fsdecode(b"\xff\xfe deploy"))
        status = manager.status()

    assert status.embed_failures == 0
    assert not [w for w in status.warnings if "failed" in w]
