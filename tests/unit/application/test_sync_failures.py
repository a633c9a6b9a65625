"""Item 14.2: a handler that cannot commit makes the sync fail, once per failed change."""

from __future__ import annotations

import pytest

from memlane.application.ports.index_store import StoreError
from memlane.application.sync_trigger import SyncFailed
from tests.unit.application.conftest import World


def test_a_handler_that_cannot_commit_fails_the_sync_and_leaves_it_pending() -> None:
    world = World()
    world.memory.write("MEMORY.md", "# Memory\n\nkept note\n")
    manager = world.manager()
    manager.sync()
    world.memory.write("memory/new.md", "# New\n\nnew note\n")
    original = world.store.replace_file

    def disk_full(*args: object, **kwargs: object) -> object:
        raise StoreError("memory.db: database or disk is full")

    world.store.replace_file = disk_full  # type: ignore[method-assign,assignment]
    with pytest.raises(SyncFailed) as failed:
        manager.sync()

    assert str(failed.value).startswith(
        "1 change(s) could not be written: memory/new.md: StoreError: memory.db: database or "
        "disk is full"
    )
    assert "\n" not in str(failed.value)
    assert len(failed.value.failures) == 1  # retried within the sync, reported once
    assert manager.status().dirty
    assert [f.path for f in world.store.files()] == ["MEMORY.md"]  # the rest as it was

    world.store.replace_file = original  # type: ignore[method-assign]
    report = manager.sync()  # the space is back: the pending change is done
    assert report.files_indexed == 1
    assert sorted(f.path for f in world.store.files()) == ["MEMORY.md", "memory/new.md"]
