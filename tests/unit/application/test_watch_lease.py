"""The watch lease in the application: a watcher says when every change it saw is indexed, and
a search in another process skips its scan only on that word (fakes; the file lock itself is
tested in tests/integration/sources/test_watch_lease_file.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memlane.domain import events
from memlane.domain.config import SyncSettings
from tests.fakes.change_journal import FakeChangeJournal
from tests.fakes.file_source import FakeChangeWatcher
from tests.fakes.watch_lease import FakeWatchLease
from tests.unit.application.conftest import LEASE_SCOPE, World
from tests.unit.application.test_scheduler import wait_until

NOTE = "# Keys\n\nThe staging vault key rotates monthly.\n"
NEW = "# Pager\n\nThe pager rota changes on Fridays.\n"


@pytest.fixture
def leased(world: World) -> World:
    world.lease = FakeWatchLease()
    world.memory.write("MEMORY.md", NOTE)
    world.manager().sync()
    world.memory.write("memory/new.md", NEW)  # on disk, not yet indexed
    return world


def _indexed(world: World) -> set[str]:
    return {f.path for f in world.store.files("memory")}


class TestSearchSkipsTheScanOnlyOnAFreshWatchersWord:
    def test_a_fresh_watcher_of_this_index_spares_the_scan(self, leased: World) -> None:
        assert leased.lease is not None
        leased.lease.holder_pid, leased.lease.scope, leased.lease.fresh = 4242, LEASE_SCOPE, True

        manager = leased.manager()

        assert manager.refresh() is None
        assert "memory/new.md" not in _indexed(leased)
        watcher = manager.status().watcher
        assert watcher is not None and (watcher.pid, watcher.fresh) == (4242, True)

    @pytest.mark.parametrize(
        ("pid", "scope", "fresh"),
        [
            (None, LEASE_SCOPE, True),  # nobody holds it (a dead watcher's word is gone)
            (4242, LEASE_SCOPE, False),  # the watcher saw a change it has not indexed yet
            (4242, '["/other/workspace", "sqlite:/fake/memory.db"]', True),  # another scope
        ],
    )
    def test_otherwise_the_search_scans(
        self, leased: World, pid: int | None, scope: str, fresh: bool
    ) -> None:
        assert leased.lease is not None
        leased.lease.holder_pid, leased.lease.scope, leased.lease.fresh = pid, scope, fresh

        manager = leased.manager()
        report = manager.refresh()

        assert report is not None and report.files_indexed == 1
        assert "memory/new.md" in _indexed(leased)
        watcher = manager.status().watcher
        assert (watcher is not None) == (pid is not None and scope == LEASE_SCOPE)


class TestStatusInAnotherProcess:
    @pytest.mark.parametrize("fresh", [False, True])
    def test_a_watcher_with_changes_pending_makes_the_index_dirty(
        self, world: World, fresh: bool
    ) -> None:
        """Another process's status said "Dirty: no" beside "Watcher: ..., changes pending"."""
        world.lease = FakeWatchLease(holder_pid=4242, scope=LEASE_SCOPE, fresh=fresh)
        world.memory.write("MEMORY.md", NOTE)
        world.manager().sync()

        report = world.manager().status()  # a process that has not synced: it knows nothing

        assert report.watcher is not None and report.watcher.fresh is fresh
        assert report.dirty is not fresh


class TestTheWordIsConfirmedBeforeTheScanIsSkipped:
    def test_a_fresh_word_the_holder_does_not_confirm_means_a_scan(self, leased: World) -> None:
        """The lease said fresh before the watcher heard of the change just made: asked now,
        the holder says no (or does not answer), and the search scans."""
        assert leased.lease is not None
        lease = leased.lease
        lease.holder_pid, lease.scope, lease.fresh, lease.answers = 4242, LEASE_SCOPE, True, False

        report = leased.manager().refresh()

        assert lease.asked == 1
        assert report is not None and "memory/new.md" in _indexed(leased)

    def test_a_watching_process_answers_from_its_change_journal(self, world: World) -> None:
        world.watcher = FakeChangeWatcher()
        world.lease = FakeWatchLease()
        world.journal = FakeChangeJournal()
        world.settings = replace(world.settings, sync=SyncSettings(watch_debounce_ms=0))
        world.memory.write("MEMORY.md", NOTE)
        world.manager().sync()
        lease, journal = world.lease, world.journal
        manager = world.manager()

        manager.start(watch=True)
        try:
            assert journal.roots  # the watching process journals the sources' roots
            assert lease.holder_pid == 1 and lease.answerer is not None
            assert wait_until(lambda: lease.fresh)  # the start sync, a scan after the journal
            assert lease.confirm() is True

            world.memory.write("memory/new.md", NEW)
            journal.count = 1  # the kernel queued the write: asked now, the holder says no
            assert lease.fresh is True  # its watcher has not reported it yet
            assert lease.confirm() is False

            assert manager.refresh() is not None  # this process scans (journal count moved)
            assert lease.confirm() is True
            journal.count = None  # the journal cannot vouch: never fresh
            assert lease.confirm() is False
        finally:
            manager.close()
        assert lease.confirm() is False  # released: nobody answers

    def test_a_journal_that_cannot_vouch_leaves_the_lease_unfresh_after_a_sync(
        self, world: World
    ) -> None:
        """`status` reads the lease's fresh word: a sync made while the journal watches less
        than the scan reads (a folder link it cannot watch) must not say "every change"."""
        world.watcher = FakeChangeWatcher()
        world.lease = FakeWatchLease()
        world.journal = FakeChangeJournal()
        world.journal.count = None  # from the start: something it cannot watch
        world.settings = replace(world.settings, sync=SyncSettings(watch_debounce_ms=0))
        world.memory.write("MEMORY.md", NOTE)
        world.manager().sync()
        lease = world.lease
        manager = world.manager()

        manager.start(watch=True)
        try:
            assert wait_until(lambda: len(lease.history) >= 2)  # acquired, then the start sync
            assert lease.fresh is False
        finally:
            manager.close()


class TestTheWatcherHoldsTheLease:
    def _start(self, world: World) -> tuple[FakeWatchLease, FakeChangeWatcher]:
        world.watcher = FakeChangeWatcher()
        world.lease = FakeWatchLease()
        world.settings = replace(world.settings, sync=SyncSettings(watch_debounce_ms=0))
        return world.lease, world.watcher

    def test_fresh_only_after_a_scan_made_while_watching_and_never_across_a_change(
        self, world: World
    ) -> None:
        lease, watcher = self._start(world)
        world.memory.write("MEMORY.md", NOTE)
        world.manager().sync()  # an index exists (`watch` syncs, then starts watching)
        world.memory.write("memory/early.md", NEW)  # changed before the watcher was live
        app = world.application()
        syncing, background = app.syncing(), app.background()

        background.start()
        try:
            assert lease.holder_pid == 1 and lease.scope == LEASE_SCOPE
            assert wait_until(lambda: lease.fresh)  # after the start sync's scan...
            assert "memory/early.md" in _indexed(world)  # ...which found the early change
            synced = syncing.last_report

            world.memory.write("memory/new.md", NEW)
            watcher.trigger(["memory/new.md"])
            assert wait_until(lambda: syncing.last_report is not synced and lease.fresh)
            assert "memory/new.md" in _indexed(world)
        finally:
            background.stop()
        assert lease.released == 1 and lease.holder() is None
        assert lease.history[0] is False  # acquired as not fresh

    def test_without_an_index_the_start_syncs_nothing_and_says_nothing_fresh(
        self, world: World
    ) -> None:
        lease, _ = self._start(world)
        world.memory.write("MEMORY.md", NOTE)
        app = world.application()
        syncing, background = app.syncing(), app.background()

        background.start()
        try:
            assert lease.holder_pid == 1
            assert not wait_until(lambda: syncing.last_report is not None, timeout=0.3)
            assert lease.fresh is False
        finally:
            background.stop()

    def test_a_change_reported_is_unfresh_before_any_sync_runs(self, world: World) -> None:
        lease, watcher = self._start(world)
        world.settings = replace(world.settings, sync=SyncSettings(watch_debounce_ms=60_000))
        world.memory.write("MEMORY.md", NOTE)
        world.manager().sync()
        background = world.application().background()

        background.start()
        try:
            lease.fresh = True  # as if the start sync had run
            watcher.trigger(["MEMORY.md"])
            assert lease.fresh is False  # the debounce window has not even begun to run out
        finally:
            background.stop()

    def test_transcript_growth_held_back_is_not_fresh(self, world: World) -> None:
        lease, _ = self._start(world)
        thresholds = replace(SyncSettings().sessions, delta_bytes=10_000_000, delta_messages=1000)
        world.settings = replace(
            world.settings, sync=SyncSettings(watch_debounce_ms=0, sessions=thresholds)
        )
        world.sessions.write("sessions/a.jsonl", '{"type": "session"}\n')
        world.manager().sync()
        world.sessions.append("sessions/a.jsonl", '{"type": "session"}\n')
        app = world.application()
        syncing, background = app.syncing(), app.background()

        background.start()
        try:
            assert wait_until(lambda: syncing.last_report is not None)
            report = syncing.last_report
            assert report is not None and report.files_held_back == 1
            assert lease.fresh is False
        finally:
            background.stop()

    def test_a_second_watcher_gets_no_lease_and_leaves_the_first_ones(self, world: World) -> None:
        lease, _ = self._start(world)
        lease.holder_pid, lease.scope, lease.fresh = 777, LEASE_SCOPE, True
        background = world.application().background()

        background.start()
        background.stop()

        assert lease.holder() is not None and lease.holder_pid == 777 and lease.fresh
        assert lease.released == 0


class TestASecondWatcherStandsBy:
    """Two watchers of one index each synced what they saw: every change was logged twice (on
    SQLite both detected it before either indexed it). Only the lease holder syncs now."""

    def _standby(self, world: World, holder_scope: str = LEASE_SCOPE) -> FakeWatchLease:
        world.watcher = FakeChangeWatcher()
        world.lease = FakeWatchLease(holder_pid=777, scope=holder_scope, fresh=True)
        world.settings = replace(world.settings, sync=SyncSettings(watch_debounce_ms=0))
        world.memory.write("MEMORY.md", NOTE)
        world.manager().sync()
        return world.lease

    def test_the_changes_it_sees_are_left_to_the_live_holder(self, world: World) -> None:
        self._standby(world)
        assert world.watcher is not None
        app = world.application()
        background = app.background()
        logged = world.log.last_position()

        background.start()
        try:
            world.memory.write("memory/new.md", NEW)
            world.watcher.trigger(["memory/new.md"])
            assert not wait_until(lambda: world.log.last_position() > logged, timeout=0.3)
        finally:
            background.stop()
        assert "memory/new.md" not in _indexed(world)  # the holder's to index, once

    def test_it_takes_over_once_the_holder_is_gone_and_indexes_what_it_left(
        self, world: World
    ) -> None:
        lease = self._standby(world)
        assert world.watcher is not None
        app = world.application()
        background = app.background()

        background.start()
        try:
            world.memory.write("memory/new.md", NEW)
            world.watcher.trigger(["memory/new.md"])  # seen by both; the holder dies unsynced
            lease.holder_pid = None
            world.clock.advance(1.0)  # the standby's next look
            assert wait_until(lambda: "memory/new.md" in _indexed(world))
            holder = lease.holder()
            assert holder is not None and holder.pid == 1  # this process holds it now
            assert wait_until(lambda: lease.fresh)
        finally:
            background.stop()
        changed = [r.event for r in world.log.read() if isinstance(r.event, events.FileChanged)]
        assert [e.path for e in changed] == ["memory/new.md"]

    def test_a_holder_of_another_index_leaves_this_one_to_this_watcher(self, world: World) -> None:
        self._standby(world, holder_scope='["/other/workspace", "sqlite:/fake/memory.db"]')
        assert world.watcher is not None
        background = world.application().background()

        background.start()
        try:
            world.memory.write("memory/new.md", NEW)
            world.watcher.trigger(["memory/new.md"])
            assert wait_until(lambda: "memory/new.md" in _indexed(world))
        finally:
            background.stop()
