"""An index fingerprinted with the older, host-path scope hash is kept on upgrade, not rebuilt."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from memlane.adapters.store.database import SqliteDatabase
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.domain.config import MemorySettings
from memlane.entrypoints.api import open_manager
from memlane.entrypoints.container import legacy_scope_hash, scope_hash

pytestmark = pytest.mark.integration

CONFIG = {"provider": "none", "extraPaths": ["../shared"]}


def _sync(tmp_path: Path) -> tuple[bool, int]:
    with open_manager(
        workspace=tmp_path / "ws", state_dir=tmp_path / "state", agent_id="main", config=CONFIG,
        env={"HOME": str(tmp_path)},
    ) as manager:  # fmt: skip
        report = manager.sync()
    return report.full_reindex, report.files_indexed


def _set_scope(db_path: Path, value: str) -> str:
    store = SqliteIndexStore(SqliteDatabase.open(db_path))
    try:
        meta = store.meta()
        assert meta is not None
        store.set_meta(replace(meta, scope_hash=value))
        return meta.scope_hash
    finally:
        store.close()


class TestScopeUpgrade:
    def test_the_legacy_fingerprint_of_this_host_is_adopted_without_a_rebuild(
        self, tmp_path: Path
    ) -> None:
        (tmp_path / "ws" / "memory").mkdir(parents=True)
        (tmp_path / "ws" / "memory" / "a.md").write_text("# A\n\nalpha\n", encoding="utf-8")
        (tmp_path / "shared").mkdir()
        (tmp_path / "shared" / "b.md").write_text("# B\n\nbeta\n", encoding="utf-8")
        db = tmp_path / "state" / "agents" / "main" / "memory.db"
        settings = MemorySettings(extra_paths=("../shared",))
        workspace = (tmp_path / "ws").resolve()
        legacy = legacy_scope_hash(
            settings, workspace, tmp_path / "state" / "agents" / "main" / "sessions"
        )

        first = _sync(tmp_path)
        current = _set_scope(db, legacy)
        upgraded = _sync(tmp_path)
        adopted = _set_scope(db, "some-other-scope")
        changed = _sync(tmp_path)

        assert first == (True, 2)
        assert current == scope_hash(settings, workspace)
        assert upgraded == (False, 0)
        assert adopted == current  # the meta was rewritten with the new form
        assert changed[0] is True  # a scope that is neither form still rebuilds
