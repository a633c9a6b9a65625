"""A process whose settings are no longer the index's does not rebuild it back on its own.

A `memlane watch` started before a config change and the CLI run after it each rebuilt the whole
index to their own settings, back and forth at every change and search (sources_changed, four
rebuilds in five seconds), with nothing said."""

from __future__ import annotations

from dataclasses import replace

from memlane.application.memory import MemoryManager
from memlane.application.sync_trigger import SyncTrigger
from memlane.domain import events
from memlane.domain.config import MemorySettings, QuerySettings
from tests.unit.application.conftest import World, message

NOTE = "# Deploys\n\nThe rollback uses blue-green.\n"


def _rebuilds(world: World) -> int:
    return sum(isinstance(r.event, events.IndexRebuilt) for r in world.log.tail(1000))


def _two_processes(world: World) -> tuple[MemoryManager, MemoryManager]:
    world.memory.write("MEMORY.md", NOTE)
    world.sessions.write("sessions/s.jsonl", message("user", "the rollback again"))
    world.settings = MemorySettings(query=QuerySettings(min_score=0.0))
    watcher = world.manager()
    watcher.sync(trigger=SyncTrigger.WATCH)  # the watcher's settings: both sources
    cli = world.manager(sources=("memory",))  # the config changed since the watcher started
    cli.sync()  # rebuilds to the CLI's settings, as the user asked
    return watcher, cli


class TestAnotherProcessesSettings:
    def test_the_watcher_does_not_rebuild_back_and_says_why(self, world: World) -> None:
        watcher, _ = _two_processes(world)
        rebuilds = _rebuilds(world)
        world.memory.write("MEMORY.md", NOTE + "\nA change the watcher sees.\n")

        report = watcher.sync(trigger=SyncTrigger.WATCH)

        assert _rebuilds(world) == rebuilds
        assert report.files_indexed == 0
        assert any("another process rebuilt the index with other settings" in w
                   for w in report.warnings)  # fmt: skip
        assert watcher.status().dirty
        meta = world.store.meta()
        assert meta is not None and meta.sources == ("memory",)

    def test_a_sync_the_user_asks_for_still_uses_its_own_settings(self, world: World) -> None:
        watcher, _ = _two_processes(world)
        rebuilds = _rebuilds(world)

        watcher.sync()  # explicit: the user's own command

        assert _rebuilds(world) == rebuilds + 1
        meta = world.store.meta()
        assert meta is not None and meta.sources == ("memory", "sessions")

    def test_its_own_later_syncs_are_not_held_back(self, world: World) -> None:
        world.memory.write("MEMORY.md", NOTE)
        watcher = world.manager()
        watcher.sync(trigger=SyncTrigger.WATCH)
        world.memory.write("memory/new.md", NOTE)

        report = watcher.sync(trigger=SyncTrigger.WATCH)

        assert report.files_indexed == 1
        assert not report.warnings


def test_settings_of_the_same_shape_from_another_process_are_no_reason() -> None:
    world = World()
    world.memory.write("MEMORY.md", NOTE)
    watcher = world.manager()
    watcher.sync(trigger=SyncTrigger.WATCH)
    other = world.manager(query=replace(world.settings.query, max_results=3))  # no reindex
    world.memory.write("memory/new.md", NOTE)
    other.sync()
    world.memory.write("memory/later.md", NOTE)

    assert watcher.sync(trigger=SyncTrigger.WATCH).files_indexed == 1
