"""The background triggers: debounce and interval timing, the worker, the search policy."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import pytest

from memlane.application.ports.file_source import ScanResult
from memlane.application.ports.index_store import VectorProgress
from memlane.application.search_syncs import FIRST_SYNC_RUNNING, SearchSyncPolicy
from memlane.application.sync_plan import SyncPlan
from memlane.application.sync_trigger import SyncTrigger
from memlane.domain.config import SyncSettings
from tests.fakes.file_source import FakeChangeWatcher, FakeFileSource
from tests.unit.application.conftest import World

_NONE = VectorProgress(done=0, total=1)
T = 1000.0  # monotonic seconds at which the plans below start


def wait_until(check: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Poll `check` for the worker thread (real time: the worker waits on a real event)."""
    pause = threading.Event()
    for _ in range(int(timeout / 0.005)):
        if check():
            return True
        pause.wait(0.005)
    return check()


class TestSyncPlanDebounce:
    def test_nothing_is_due_and_nothing_is_awaited_without_requests(self) -> None:
        plan = SyncPlan(debounce=1.5, interval=0, now=T)

        assert plan.due(T + 3600) is None
        assert plan.wait(T + 3600) is None

    def test_a_request_falls_due_one_window_after_it_was_made(self) -> None:
        plan = SyncPlan(debounce=1.5, interval=0, now=T)

        plan.request(SyncTrigger.WATCH, T)

        assert plan.due(T + 1.4) is None
        assert plan.wait(T + 1.4) == pytest.approx(0.1)
        assert plan.due(T + 1.5) is SyncTrigger.WATCH

    def test_a_new_request_inside_the_window_pushes_the_sync_back(self) -> None:
        plan = SyncPlan(debounce=1.5, interval=0, now=T)
        plan.request(SyncTrigger.WATCH, T)

        plan.request(SyncTrigger.WATCH, T + 1.0)

        assert plan.due(T + 2.0) is None
        assert plan.due(T + 2.5) is SyncTrigger.WATCH

    def test_a_constant_stream_of_requests_cannot_starve_the_sync(self) -> None:
        """Due five windows after the first request, however many follow."""
        plan = SyncPlan(debounce=1.5, interval=0, now=T)
        now = T
        while now < T + 7.5:
            plan.request(SyncTrigger.WATCH, now)
            now += 0.5

        assert plan.due(T + 7.4) is None
        assert plan.due(T + 7.5) is SyncTrigger.WATCH

    def test_a_short_window_still_waits_a_second_at_most_not_five_windows(self) -> None:
        plan = SyncPlan(debounce=0.01, interval=0, now=T)
        for step in range(200):
            plan.request(SyncTrigger.WATCH, T + step * 0.005)

        assert plan.due(T + 0.99) is None
        assert plan.due(T + 1.0) is SyncTrigger.WATCH

    def test_the_latest_trigger_names_the_coalesced_sync(self) -> None:
        plan = SyncPlan(debounce=1.5, interval=0, now=T)
        plan.request(SyncTrigger.WATCH, T)

        plan.request(SyncTrigger.SEARCH, T + 0.1)

        assert plan.due(T + 2) is SyncTrigger.SEARCH

    def test_a_started_sync_answers_earlier_requests_not_later_ones(self) -> None:
        plan = SyncPlan(debounce=1.5, interval=0, now=T)
        plan.request(SyncTrigger.WATCH, T)
        plan.synced(T + 1.5)
        assert plan.due(T + 10) is None

        plan.request(SyncTrigger.WATCH, T + 1.6)  # a change seen while that sync runs

        assert plan.due(T + 3.1) is SyncTrigger.WATCH


class TestSyncPlanInterval:
    def test_an_interval_sync_falls_due_after_the_interval(self) -> None:
        plan = SyncPlan(debounce=1.5, interval=600, now=T)

        assert plan.wait(T) == 600
        assert plan.due(T + 599) is None
        assert plan.due(T + 600) is SyncTrigger.INTERVAL

    def test_any_sync_restarts_the_interval(self) -> None:
        plan = SyncPlan(debounce=1.5, interval=600, now=T)
        plan.request(SyncTrigger.WATCH, T + 100)

        plan.synced(T + 101.5)

        assert plan.due(T + 600) is None
        assert plan.wait(T + 600) == pytest.approx(101.5)
        assert plan.due(T + 701.5) is SyncTrigger.INTERVAL

    def test_a_pending_request_is_awaited_before_the_interval(self) -> None:
        plan = SyncPlan(debounce=1.5, interval=600, now=T)

        plan.request(SyncTrigger.SEARCH, T + 10)

        assert plan.wait(T + 10) == 1.5


def _quick(world: World, *, watch: bool = False, debounce_ms: int = 0) -> None:
    """Sync settings for worker tests; debounce zero runs a request at once."""
    sync = SyncSettings(watch=watch, watch_debounce_ms=debounce_ms)
    world.settings = replace(world.settings, sync=sync)


@dataclass
class _FailingOnceSource(FakeFileSource):
    """A memory source whose first scan fails as if the disk vanished."""

    failed: bool = False

    def scan(self) -> ScanResult:
        if not self.failed:
            self.failed = True
            raise OSError("disk vanished")
        return super().scan()


@pytest.fixture
def watched(world: World) -> World:
    world.watcher = FakeChangeWatcher()
    world.memory.write("MEMORY.md", "# Notes\n\nThe staging cluster lives in Frankfurt.\n")
    return world


class TestBackgroundSyncer:
    def test_a_request_before_start_only_marks_the_index_dirty(self, world: World) -> None:
        _quick(world)
        app = world.application()
        app.syncing().run(SyncTrigger.EXPLICIT)

        app.background().request(SyncTrigger.SEARCH)

        assert app.syncing().dirty
        assert app.background().pending is None

    def test_a_started_worker_runs_a_requested_sync(self, world: World) -> None:
        _quick(world)
        app = world.application()
        syncing, background = app.syncing(), app.background()
        background.start()
        try:
            background.request(SyncTrigger.SESSION_START)

            assert wait_until(lambda: syncing.last_report is not None)
        finally:
            background.stop()
        assert syncing.last_report is not None
        assert syncing.last_report.reason == "session-start"
        assert not syncing.dirty

    def test_a_watcher_report_becomes_a_watch_sync(self, watched: World) -> None:
        _quick(watched, watch=True)
        app = watched.application()
        syncing, background = app.syncing(), app.background()
        watcher = watched.watcher
        assert watcher is not None

        background.start()
        try:
            assert watcher.started
            assert set(watcher.roots) == {"/fake/workspace"}
            watcher.trigger(["/fake/workspace/MEMORY.md"])

            assert wait_until(lambda: syncing.last_report is not None)
        finally:
            background.stop()
        assert syncing.last_report is not None
        assert syncing.last_report.reason == "watch"
        assert syncing.last_report.files_indexed == 1
        assert watcher.stop_calls == 1

    def test_the_watcher_stays_off_when_the_settings_say_so(self, watched: World) -> None:
        _quick(watched, watch=False)
        background = watched.application().background()

        background.start()
        background.stop()

        assert watched.watcher is not None
        assert not watched.watcher.started
        assert watched.watcher.stop_calls == 0

    def test_a_stop_during_a_start_leaves_nothing_running(self, watched: World) -> None:
        """An MCP or UI server starts the worker from a thread of its own; a host that closes
        at that moment stopped it half-started: the watcher the start then opened ran on after
        `stop` returned (and a stop between making the worker thread and starting it failed
        with "cannot join thread before it is started")."""
        _quick(watched, watch=True)
        entered, release = threading.Event(), threading.Event()

        @dataclass
        class SlowWatcher(FakeChangeWatcher):
            def start(
                self, roots: Sequence[str], on_change: Callable[[Sequence[str]], None]
            ) -> None:
                entered.set()
                release.wait(5)
                super().start(roots, on_change)

        watcher = watched.watcher = SlowWatcher()
        background = watched.application().background()
        starting = threading.Thread(target=background.start)
        starting.start()
        assert entered.wait(5)
        stopping = threading.Thread(target=background.stop)
        stopping.start()
        stopping.join(0.2)  # stop is under way while the watcher is still starting
        release.set()
        starting.join(5)
        stopping.join(5)

        assert not starting.is_alive() and not stopping.is_alive()
        assert not watcher.started  # the watcher the start opened was closed by the stop
        background.start()  # a stopped worker stays stopped
        assert not watcher.started

    def test_the_worker_backfills_vectors_between_syncs(self, world: World) -> None:
        """A server's syncs commit keyword rows only; the worker embeds the rest in batches."""
        _quick(world)
        for n in range(40):  # more than one batch
            world.memory.write(f"memory/n{n}.md", f"# Note {n}\n\nThe cluster {n} note.\n")
        app = world.application()
        syncing, background = app.syncing(), app.background()
        background.start()
        try:
            background.request(SyncTrigger.SESSION_START)
            assert wait_until(lambda: syncing.last_report is not None)
            report = syncing.last_report
            assert report is not None and report.vectors_backfilled == 0  # left to the worker

            assert wait_until(lambda: (syncing.vector_progress() or _NONE).complete, timeout=20)
        finally:
            background.stop()
        assert syncing.vector_progress() == VectorProgress(done=40, total=40)

    def test_a_sync_that_did_not_wait_wakes_an_idle_worker_to_embed_the_rest(
        self, world: World
    ) -> None:
        """A server's `Sync` that returns before the vectors (gRPC `wait_for_vectors` false)
        hands them to the worker even when it had nothing left to do and waits for a request."""
        _quick(world)
        for n in range(40):  # more than one batch
            world.memory.write(f"memory/n{n}.md", f"# Note {n}\n\nThe cluster {n} note.\n")
        app = world.application()
        manager, syncing, background = app.manager(), app.syncing(), app.background()
        manager.start()
        try:
            # Idle: the start-up backfill step found no vectors missing, nothing is requested.
            assert wait_until(lambda: not background.vectors_pending)

            report = manager.sync(wait_for_vectors=False)

            assert report.vectors == VectorProgress(done=0, total=40)
            assert wait_until(lambda: (syncing.vector_progress() or _NONE).complete, timeout=20)
        finally:
            background.stop()
        assert syncing.vector_progress() == VectorProgress(done=40, total=40)

    def test_a_failing_sync_does_not_end_the_worker(self, world: World) -> None:
        failing = _FailingOnceSource(source_name="memory")
        failing.write("MEMORY.md", "# Notes\n\nfirst\n")
        world.memory = failing
        _quick(world)
        app = world.application()
        syncing, background = app.syncing(), app.background()
        world.store.set_meta(app.wanted_meta()())  # an index exists: syncs are incremental
        background.start()
        try:
            background.request(SyncTrigger.WATCH)
            assert wait_until(lambda: failing.failed and background.pending is None)
            background.request(SyncTrigger.WATCH)

            assert wait_until(lambda: syncing.last_report is not None)
        finally:
            background.stop()
        assert syncing.last_report is not None
        assert syncing.last_report.files_indexed == 1


class TestSearchSyncPolicy:
    def test_each_new_session_gets_one_warm_up_sync(self, world: World) -> None:
        _quick(world)
        app = world.application()
        syncing, background, policy = app.syncing(), app.background(), app.search_policy()
        syncing.run(SyncTrigger.EXPLICIT)
        background.start()
        try:
            policy.before_search("session-a")
            assert wait_until(lambda: syncing.last_report is not None and not syncing.dirty)
            warmed = syncing.last_report
            policy.before_search("session-a")
            again = background.pending
            policy.before_search("session-b")
            assert wait_until(lambda: syncing.last_report is not warmed and not syncing.dirty)
        finally:
            background.stop()

        assert warmed is not None
        assert warmed.reason == "session-start"
        assert again is None
        assert syncing.last_report is not None
        assert syncing.last_report.reason == "session-start"

    def test_a_dirty_index_asks_for_a_search_sync_a_clean_one_does_not(self, world: World) -> None:
        _quick(world, debounce_ms=60_000)  # requested syncs stay pending, for the test to read
        app = world.application()
        syncing, background, policy = app.syncing(), app.background(), app.search_policy()
        syncing.run(SyncTrigger.EXPLICIT)
        background.start()
        try:
            policy.before_search(None)
            clean = background.pending
            syncing.mark_dirty()
            policy.before_search(None)

            assert clean is None
            assert background.pending is SyncTrigger.SEARCH
        finally:
            background.stop()


@dataclass
class _BlockedSource(FakeFileSource):
    """A memory source whose scan waits until the test releases it."""

    release: threading.Event = field(default_factory=threading.Event)

    def scan(self) -> ScanResult:
        self.release.wait(30)
        return super().scan()


class TestFirstSearchWarning:
    """A search that reads an index its first sync has not built says so in its response."""

    def _policy_with(self, world: World, source: FakeFileSource, wait_ms: int) -> SearchSyncPolicy:
        source.write("MEMORY.md", "# Notes\n\nfirst\n")
        world.memory = source
        world.settings = replace(world.settings, sync=SyncSettings(first_search_wait_ms=wait_ms))
        return world.application().search_policy()

    def test_a_first_sync_still_running_is_said(self, world: World) -> None:
        source = _BlockedSource(source_name="memory")
        policy = self._policy_with(world, source, wait_ms=0)
        try:
            assert policy.before_search(None) == FIRST_SYNC_RUNNING
        finally:
            source.release.set()

    def test_a_failed_first_sync_is_said(self, world: World) -> None:
        policy = self._policy_with(world, _FailingOnceSource(source_name="memory"), 60_000)

        warning = policy.before_search(None)

        assert warning is not None and warning.startswith("the first sync failed (")
        assert "disk vanished" in warning

    def test_a_finished_first_sync_says_nothing(self, world: World) -> None:
        policy = self._policy_with(world, FakeFileSource(source_name="memory"), 60_000)

        assert policy.before_search(None) is None
