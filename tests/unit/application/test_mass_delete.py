"""A sync that would remove a large share of the index stops first (issue #30), on fakes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memlane.application.mass_delete import MassDeletion, over_limit
from memlane.application.sync_trigger import SyncTrigger
from memlane.domain import events
from memlane.domain.config import SyncSettings
from tests.fakes.clock import T0
from tests.unit.application.conftest import World

NOTES = {f"memory/2026-11-0{i}.md": f"# Day {i}\n\nThe harbour log of day {i}.\n" for i in range(5)}


def _indexed(world: World) -> list[str]:
    return [f.path for f in world.store.files("memory")]


def _world_with_notes(world: World) -> World:
    for path, text in NOTES.items():
        world.memory.write(path, text)
    world.manager().sync()
    return world


class TestTheGuard:
    def test_an_emptied_workspace_removes_nothing_and_says_why(self, world: World) -> None:
        _world_with_notes(world)
        positions = world.log.last_position()
        for path in NOTES:
            world.memory.delete(path)

        with pytest.raises(MassDeletion) as refused:
            world.manager().sync()

        assert _indexed(world) == sorted(NOTES)
        # Not even a FileDeleted was logged: only the verdict, for `status` in any process.
        logged = [type(r.event) for r in world.log.tail(5) if r.position > positions]
        assert logged == [events.SyncFailed]
        text = str(refused.value)
        assert "5 of the 5 indexed notes" in text
        assert "--allow-mass-delete" in text and "sync.maxDeletePercent (20 %)" in text

    def test_allowed_on_purpose_it_removes_them(self, world: World) -> None:
        _world_with_notes(world)
        for path in NOTES:
            world.memory.delete(path)

        report = world.manager().sync(allow_mass_delete=True)

        assert report.files_removed == 5
        assert _indexed(world) == []

    def test_a_forced_rebuild_of_an_emptied_workspace_is_refused_too(self, world: World) -> None:
        _world_with_notes(world)
        for path in NOTES:
            world.memory.delete(path)

        with pytest.raises(MassDeletion):
            world.manager().sync(force=True)

        assert _indexed(world) == sorted(NOTES)

    def test_removals_within_the_share_go_ahead(self, world: World) -> None:
        _world_with_notes(world)
        world.memory.delete("memory/2026-11-00.md")  # one of five: 20 %, not more

        assert world.manager().sync().files_removed == 1

    def test_the_share_is_a_setting(self, world: World) -> None:
        _world_with_notes(world)
        for path in list(NOTES)[:3]:
            world.memory.delete(path)
        settings = replace(world.settings.sync, max_delete_percent=60.0)

        assert world.manager(sync=settings).sync().files_removed == 3

    def test_a_search_answers_from_the_index_and_warns(self, world: World) -> None:
        _world_with_notes(world)
        for path in NOTES:
            world.memory.delete(path)
        manager = world.manager()
        manager.mark_dirty()

        manager.refresh(SyncTrigger.SEARCH)
        response = manager.search("harbour log")

        assert response.results, "the index still answers"
        assert any("not synced" in w and "--allow-mass-delete" in w for w in response.warnings)
        assert _indexed(world) == sorted(NOTES)


class TestStatusSaysIt:
    def test_the_process_that_was_refused_reports_it_and_dirty(self, world: World) -> None:
        _world_with_notes(world)
        for path in NOTES:
            world.memory.delete(path)
        manager = world.manager()
        with pytest.raises(MassDeletion):
            manager.sync()

        status = manager.status()

        assert status.dirty
        assert any("sync stopped" in w and "--allow-mass-delete" in w for w in status.warnings)

    def test_a_refused_sync_leaves_the_index_known_dirty_after_a_clean_one(
        self, world: World
    ) -> None:
        """A process whose last sync went through knew its index clean; the refused sync after
        it left that so, and its searches did not name their hits' deleted files (a daemon and
        an in-process search answered differently, CI)."""
        _world_with_notes(world)
        manager = world.manager()
        manager.sync()  # clean: this process knows its index up to date
        for path in NOTES:
            world.memory.delete(path)

        with pytest.raises(MassDeletion):
            manager.sync()
        found = manager.search("harbour log")

        assert found.results
        assert any("changed since they were indexed" in w for w in found.warnings)

    def test_a_fresh_process_sees_it_in_a_deep_status_only(self, world: World) -> None:
        _world_with_notes(world)
        for path in NOTES:
            world.memory.delete(path)

        shallow = world.manager().status()
        deep = world.manager().status(deep=True)

        assert not any("mass" in w or "will stop" in w for w in shallow.warnings)  # no rescan
        assert deep.dirty
        (said,) = [w for w in deep.warnings if "the next sync will stop" in w]
        assert "5 of the 5 indexed notes" in said and "--allow-mass-delete" in said

    def test_a_deep_status_of_a_few_deleted_notes_stays_quiet(self, world: World) -> None:
        _world_with_notes(world)
        world.memory.delete("memory/2026-11-00.md")

        deep = world.manager().status(deep=True)

        assert not any("will stop" in w for w in deep.warnings)


class TestOverLimit:
    def _deleted(self, count: int) -> list[events.Event]:
        return [
            events.FileDeleted(occurred_at=T0, source="memory", path=f"n{i}.md")
            for i in range(count)
        ]

    def test_a_single_file_is_never_a_mass_deletion(self) -> None:
        assert over_limit(self._deleted(1), {"memory": 1}, 20.0) == []

    def test_counts_per_source(self) -> None:
        found = [
            *self._deleted(3),
            events.FileDeleted(occurred_at=T0, source="sessions", path="sessions/a.jsonl"),
        ]

        refused = over_limit(found, {"memory": 10, "sessions": 100}, 20.0)

        assert [(r.source, r.removed, r.indexed) for r in refused] == [("memory", 3, 10)]

    def test_one_hundred_percent_turns_it_off(self) -> None:
        assert over_limit(self._deleted(5), {"memory": 5}, 100.0) == []


def test_the_default_share_is_twenty_percent() -> None:
    assert SyncSettings().max_delete_percent == 20.0
