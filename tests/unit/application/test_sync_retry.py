"""A failed background sync runs again on its own, after a growing delay, until one succeeds.

The worker waits on a real event for as long as the injected clock says, so the worker tests
give it delays of a few milliseconds and move the fake clock past them by hand: nothing is due
before the test says so.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from structlog.testing import capture_logs

from memlane.application.ports.file_source import ScanResult
from memlane.application.ports.index_store import StoreCorrupt, StoreError, StoreReadOnly
from memlane.application.scheduler import BackgroundSyncer
from memlane.application.sync import SyncService
from memlane.application.sync_plan import RetryBackoff, SyncPlan
from memlane.application.sync_trigger import SyncTrigger
from memlane.application.workspace import WorkspaceMissing
from memlane.domain.config import SyncSettings
from tests.fakes.file_source import FakeFileSource
from tests.unit.application.conftest import World
from tests.unit.application.test_scheduler import wait_until

T = 1000.0
NOTES = ("MEMORY.md", "memory/old.md")
QUICK = RetryBackoff(first=0.02, cap=0.08)  # the worker's real waits, while the clock stands


class TestRetryBackoff:
    def test_five_seconds_doubling_up_to_five_minutes(self) -> None:
        backoff = RetryBackoff()

        delays = [backoff.delay(attempt) for attempt in range(1, 9)]

        assert delays == [5, 10, 20, 40, 80, 160, 300, 300]

    def test_a_store_down_for_days_stays_at_the_cap(self) -> None:
        """2.0 ** attempt overflows a float past ~1,000 attempts (3.5 days at 5 minutes)."""
        assert RetryBackoff().delay(100_000) == 300


class TestSyncPlanRetry:
    def test_a_retry_falls_due_at_its_time(self) -> None:
        plan = SyncPlan(debounce=1.5, interval=0, now=T)

        plan.retry(SyncTrigger.WATCH, T + 5)

        assert plan.due(T + 4.9) is None
        assert plan.wait(T + 4) == pytest.approx(1)
        assert plan.due(T + 5) is SyncTrigger.WATCH
        assert plan.pending is None  # nobody requested it

    def test_a_sync_answers_the_retry(self) -> None:
        plan = SyncPlan(debounce=1.5, interval=0, now=T)
        plan.retry(SyncTrigger.WATCH, T + 5)

        plan.synced(T + 1)

        assert plan.due(T + 3600) is None
        assert plan.wait(T + 3600) is None

    def test_a_new_request_does_not_wait_for_the_retry(self) -> None:
        plan = SyncPlan(debounce=1.5, interval=0, now=T)
        plan.retry(SyncTrigger.WATCH, T + 300)

        plan.request(SyncTrigger.SEARCH, T + 10)

        assert plan.wait(T + 10) == 1.5
        assert plan.due(T + 11.5) is SyncTrigger.SEARCH


@dataclass
class _ScriptedSource(FakeFileSource):
    """A memory source whose next scans raise the scripted errors, then work again."""

    errors: list[Exception] = field(default_factory=list)
    scans: int = 0

    def scan(self) -> ScanResult:
        self.scans += 1
        if self.errors:
            raise self.errors.pop(0)
        return super().scan()


@dataclass
class _Rig:
    world: World
    source: _ScriptedSource
    syncing: SyncService
    background: BackgroundSyncer
    logs: list[MutableMapping[str, Any]]

    def failures(self) -> list[MutableMapping[str, Any]]:
        return [e for e in self.logs if e["event"] == "background_sync_failed"]

    def retried(self) -> list[tuple[int, float]]:
        """(attempt, retry_in_s) of each failure logged for a retry."""
        return [(e["attempt"], e["retry_in_s"]) for e in self.failures() if "attempt" in e]

    def indexed(self) -> list[str]:
        return [f.path for f in self.world.store.files("memory")]


@pytest.fixture
def rig(world: World) -> Iterator[_Rig]:
    """Two indexed notes, then a worker (debounce zero) whose sync failures are scripted."""
    source = _ScriptedSource(source_name="memory")
    for path in NOTES:
        source.write(path, "# Notes\n\nThe staging cluster lives in Frankfurt.\n")
    world.memory = source
    world.settings = replace(world.settings, sync=SyncSettings(watch=False, watch_debounce_ms=0))
    app = world.application()
    syncing = app.syncing()
    syncing.run(SyncTrigger.EXPLICIT)
    background = BackgroundSyncer(
        syncing=syncing,
        clock=world.clock,
        settings=world.settings.sync,
        sources={"memory": source},
        backoff=QUICK,
    )
    with capture_logs() as logs:
        background.start()
        try:
            yield _Rig(world, source, syncing, background, logs)
        finally:
            background.stop()


def _stays(check: Any) -> bool:
    """Whether `check` stays false for a while (the worker polls every few milliseconds)."""
    return not wait_until(check, timeout=0.3)


class TestTheWorkerRetries:
    def test_a_failed_sync_runs_again_on_its_own_once_the_cause_is_gone(self, rig: _Rig) -> None:
        """The QA repro: the store is away while a note is added; nothing asks again."""
        rig.source.write("memory/new.md", "# New\n\nThe failover drill is on Tuesday.\n")
        rig.source.errors = [StoreError("memory.db: database is locked")]

        rig.background.request(SyncTrigger.WATCH)

        assert wait_until(lambda: rig.retried() == [(1, 0.02)])
        assert rig.failures()[0]["log_level"] == "warning"
        assert rig.syncing.dirty
        assert _stays(lambda: rig.source.scans > 2)  # not before its time
        rig.world.clock.advance(0.02)
        assert wait_until(lambda: "memory/new.md" in rig.indexed())
        assert wait_until(lambda: not rig.syncing.dirty)
        report = rig.syncing.last_report
        assert report is not None and report.reason == "watch"
        assert any(e["event"] == "background_sync_recovered" for e in rig.logs)

    def test_the_delay_doubles_to_its_cap_and_a_success_ends_the_series(self, rig: _Rig) -> None:
        rig.source.errors = [OSError("disk full")] * 4
        rig.background.request(SyncTrigger.WATCH)

        for attempt in range(1, 5):
            assert wait_until(lambda n=attempt: len(rig.retried()) == n)  # type: ignore[misc]
            rig.world.clock.advance(0.08)
        assert wait_until(lambda: rig.source.scans == 6 and not rig.syncing.dirty)

        assert rig.retried() == [(1, 0.02), (2, 0.04), (3, 0.08), (4, 0.08)]
        rig.world.clock.advance(10)
        assert _stays(lambda: rig.source.scans > 6)  # succeeded: no more retries
        # A new failure starts a new series with the first delay.
        rig.source.errors = [OSError("disk full")]
        rig.background.request(SyncTrigger.WATCH)
        assert wait_until(lambda: rig.retried()[-1:] == [(1, 0.02)])

    def test_a_change_synced_meanwhile_is_the_next_attempt(self, rig: _Rig) -> None:
        """A new change does not wait for the backoff; when its sync succeeds, retries end."""
        rig.source.errors = [OSError("disk full")] * 2
        rig.background.request(SyncTrigger.WATCH)
        assert wait_until(lambda: len(rig.retried()) == 1)

        rig.background.request(SyncTrigger.WATCH)  # the clock stands: before the retry is due
        assert wait_until(lambda: rig.retried() == [(1, 0.02), (2, 0.04)])
        rig.background.request(SyncTrigger.WATCH)
        assert wait_until(lambda: rig.source.scans == 4 and not rig.syncing.dirty)

        rig.world.clock.advance(10)
        assert _stays(lambda: rig.source.scans > 4)

    @pytest.mark.parametrize(
        "lasting",
        [
            StoreCorrupt("memory.db: file is not a database"),
            WorkspaceMissing("/fake/workspace", recorded=True),
        ],
        ids=["damaged-store", "workspace-gone"],
    )
    def test_a_failure_only_the_user_can_fix_ends_the_retries(
        self, rig: _Rig, lasting: Exception
    ) -> None:
        rig.source.errors = [OSError("disk full"), lasting]
        rig.background.request(SyncTrigger.WATCH)
        assert wait_until(lambda: len(rig.retried()) == 1)

        rig.world.clock.advance(0.02)
        assert wait_until(lambda: len(rig.failures()) == 2)

        assert rig.failures()[-1]["retry"] is False
        rig.world.clock.advance(10)
        assert _stays(lambda: rig.source.scans > 3)

    def test_a_read_only_store_ends_the_retries(self, rig: _Rig) -> None:
        """`run_unless_read_only` skips the sync: searches read the index as it is."""
        rig.source.errors = [OSError("disk full"), StoreReadOnly("memory.db: read-only")]
        rig.background.request(SyncTrigger.WATCH)
        assert wait_until(lambda: len(rig.retried()) == 1)

        rig.world.clock.advance(0.02)
        assert wait_until(lambda: rig.syncing.read_only is not None)

        rig.world.clock.advance(10)
        assert _stays(lambda: rig.source.scans > 3)
        assert len(rig.failures()) == 1

    def test_a_mass_deletion_refusal_ends_the_retries(self, rig: _Rig) -> None:
        """The guard waits for the user (--allow-mass-delete) or the next change."""
        rig.source.errors = [OSError("disk full")]
        rig.background.request(SyncTrigger.WATCH)
        assert wait_until(lambda: len(rig.retried()) == 1)

        for path in NOTES:  # every indexed note gone: an unmounted share, say
            rig.source.delete(path)
        rig.world.clock.advance(0.02)
        assert wait_until(lambda: rig.syncing.refusal is not None)

        rig.world.clock.advance(10)
        assert _stays(lambda: rig.source.scans > 3)
        assert rig.indexed() == sorted(NOTES)


def test_stop_does_not_wait_for_the_backoff(world: World) -> None:
    """With the real delays: the first retry is 5 s away, and stop returns at once."""
    source = _ScriptedSource(source_name="memory", errors=[OSError("disk full")])
    source.write("MEMORY.md", "# Notes\n\nfirst\n")
    world.memory = source
    world.settings = replace(world.settings, sync=SyncSettings(watch=False, watch_debounce_ms=0))
    background = world.application().background()
    with capture_logs() as logs:
        background.start()
        background.request(SyncTrigger.WATCH)
        retried = wait_until(lambda: any(e.get("retry_in_s") == 5.0 for e in logs))
        started = time.monotonic()
        background.stop()
        stopped_in = time.monotonic() - started

    assert retried
    assert stopped_in < 1.0
