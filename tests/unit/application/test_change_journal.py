"""A long-lived process (the daemon) decides a search's scan by its change journal: it scans
after any change the journal counted, skips only when nothing was counted since a completed
scan, and never trusts a watcher's lease instead (fakes; the inotify journal itself is tested
in tests/integration/sources/test_change_journal_inotify.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memlane.application.memory import MemoryManager
from memlane.domain.config import SyncSettings
from tests.fakes.change_journal import FakeChangeJournal
from tests.fakes.file_source import FakeChangeWatcher
from tests.fakes.watch_lease import FakeWatchLease
from tests.unit.application.conftest import LEASE_SCOPE, World
from tests.unit.application.test_scheduler import wait_until

NOTE = "# Keys\n\nThe staging vault key rotates monthly.\n"
NEW = "# Pager\n\nThe pager rota changes on Fridays.\n"


def _indexed(world: World) -> set[str]:
    return {f.path for f in world.store.files("memory")}


@pytest.fixture
def tracked(world: World) -> tuple[World, MemoryManager, FakeChangeJournal]:
    world.lease = FakeWatchLease()
    world.memory.write("MEMORY.md", NOTE)
    manager = world.manager()
    manager.sync()
    journal = FakeChangeJournal()

    def make(roots: list[str]) -> FakeChangeJournal:
        journal.roots = roots
        return journal

    manager.track_changes(make)
    return world, manager, journal


def test_the_first_refresh_scans_then_only_a_counted_change_does(
    tracked: tuple[World, MemoryManager, FakeChangeJournal],
) -> None:
    world, manager, journal = tracked
    world.memory.write("memory/new.md", NEW)

    first = manager.refresh()  # nothing vouches for the time before the journal began
    assert first is not None and "memory/new.md" in _indexed(world)

    world.memory.write("memory/later.md", NEW)  # uncounted: as if no change happened
    assert manager.refresh() is None
    assert "memory/later.md" not in _indexed(world)

    journal.count = 3  # the kernel reported the write
    report = manager.refresh()
    assert report is not None and "memory/later.md" in _indexed(world)
    assert manager.refresh() is None  # and nothing since


def test_a_fresh_watcher_is_not_trusted_over_the_journal(
    tracked: tuple[World, MemoryManager, FakeChangeJournal],
) -> None:
    world, manager, journal = tracked
    manager.refresh()
    assert world.lease is not None
    world.lease.holder_pid, world.lease.scope, world.lease.fresh = 4242, LEASE_SCOPE, True
    world.memory.write("memory/new.md", NEW)
    journal.count = 1  # counted, though the watcher has not read it yet and still says fresh

    report = manager.refresh()

    assert report is not None and "memory/new.md" in _indexed(world)


def test_a_journal_that_cannot_vouch_means_a_scan_every_time(
    tracked: tuple[World, MemoryManager, FakeChangeJournal],
) -> None:
    world, manager, journal = tracked
    journal.count = None
    assert manager.refresh() is not None
    world.memory.write("memory/new.md", NEW)
    assert manager.refresh() is not None
    assert "memory/new.md" in _indexed(world)


def test_the_journal_watches_the_sources_roots_and_closes_with_the_manager(
    tracked: tuple[World, MemoryManager, FakeChangeJournal],
) -> None:
    world, manager, journal = tracked
    expected = [root for s in (world.memory, world.sessions) for root in s.watch_roots()]
    assert journal.roots == expected and journal.roots
    manager.close()
    assert journal.closed


def test_a_background_sync_counts_as_the_scan_of_what_it_saw(world: World) -> None:
    world.watcher = FakeChangeWatcher()
    world.settings = replace(world.settings, sync=SyncSettings(watch_debounce_ms=0))
    world.memory.write("MEMORY.md", NOTE)
    manager = world.manager()
    manager.sync()
    journal = FakeChangeJournal()
    manager.track_changes(lambda roots: journal)
    manager.start(watch=True)
    try:
        assert manager.refresh() is not None  # the journal's first: a scan
        world.memory.write("memory/new.md", NEW)
        journal.count = 2  # the kernel saw it; so does the watcher, which syncs in the background
        assert world.watcher is not None
        world.watcher.trigger(["memory/new.md"])
        assert wait_until(lambda: "memory/new.md" in _indexed(world))
        # that sync's scan is recorded (the journal's state lives in the manager's upkeep)
        assert wait_until(lambda: manager._upkeep._journal_clean == 2)
        world.memory.write("memory/uncounted.md", NEW)  # not counted: proves no scan runs
        assert manager.refresh() is None
        assert "memory/uncounted.md" not in _indexed(world)
        world.memory.write("memory/later.md", NEW)
        journal.count = 3  # counted, not yet synced by anyone: the search scans
        report = manager.refresh()
        assert report is not None and "memory/later.md" in _indexed(world)
    finally:
        manager.close()


def test_a_refused_background_sync_is_not_a_scan_that_vouches(world: World) -> None:
    """The mass-delete guard stopped the watcher's sync: the journal stays unvouched, so the
    next search scans again (and is refused again, warning), exactly as in-process."""
    world.watcher = FakeChangeWatcher()
    world.lease = lease = FakeWatchLease()  # its history tells when a background sync ended
    world.settings = replace(world.settings, sync=SyncSettings(watch_debounce_ms=0))
    world.memory.write("MEMORY.md", NOTE)
    for n in range(4):
        world.memory.write(f"memory/n{n}.md", NEW)
    manager = world.manager()
    manager.sync()
    journal = FakeChangeJournal()
    manager.track_changes(lambda roots: journal)
    manager.start(watch=True)
    try:
        assert wait_until(lambda: lease.history[-1:] == [True])  # the start-up sync is over
        assert manager._upkeep._journal_clean == 0  # that sync's scan vouches for count 0
        for n in range(4):  # 4 of 5 notes gone: over the 20 % default
            world.memory.delete(f"memory/n{n}.md")
        journal.count = 4
        said = len(lease.history)
        assert world.watcher is not None
        world.watcher.trigger(["memory/n0.md"])  # the change (not fresh), then the sync's end
        assert wait_until(lambda: len(lease.history) >= said + 2)
        assert manager._upkeep._syncing.refusal is not None
        assert manager._upkeep._journal_clean == 0  # the refused sync vouched for nothing
        assert manager.refresh() is None  # scanned, refused again: searched as it is
        assert manager._upkeep._journal_clean == 0
        response = manager.search("pager")
        assert any("sync.maxDeletePercent" in w for w in response.warnings)
        assert len(_indexed(world)) == 5  # nothing removed
    finally:
        manager.close()


def test_a_start_after_the_close_opens_no_journal_and_no_watcher(world: World) -> None:
    """A server starts its manager from a thread of its own; a host that closed it first (an
    MCP client gone at once) got a journal and a watcher opened after the close, never shut."""
    world.watcher = FakeChangeWatcher()
    world.journal = FakeChangeJournal()  # what the watching manager's factory would open
    world.memory.write("MEMORY.md", NOTE)
    manager = world.manager()
    manager.sync()

    manager.close()
    manager.start(watch=True)

    assert world.journal.roots == []  # never asked for
    assert not world.watcher.started
