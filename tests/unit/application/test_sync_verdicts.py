"""`status` says why the last sync failed (when, which trigger, the reasons), in the process it
failed in and in any other over the same event log, until a sync goes through."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pytest
from structlog.testing import capture_logs

from memlane.application.mass_delete import MassDeletion
from memlane.application.messagebus import HandlerFailure
from memlane.application.ports.event_log import EventLogError
from memlane.application.ports.file_source import ScanResult
from memlane.application.ports.index_store import StoreError
from memlane.application.sync_trigger import SyncFailed, SyncTrigger
from memlane.domain import events
from memlane.domain.config import SyncSettings
from tests.fakes.file_source import FakeFileSource
from tests.unit.application.conftest import World
from tests.unit.application.test_scheduler import wait_until

NOTE = "# Notes\n\nThe staging cluster lives in Frankfurt.\n"


@dataclass
class _ScriptedSource(FakeFileSource):
    """A memory source whose next scans raise the scripted errors, then work again."""

    errors: list[Exception] = field(default_factory=list)

    def scan(self) -> ScanResult:
        if self.errors:
            raise self.errors.pop(0)
        return super().scan()


@pytest.fixture
def scripted(world: World) -> _ScriptedSource:
    source = _ScriptedSource(source_name="memory")
    source.write("MEMORY.md", NOTE)
    world.memory = source
    world.settings = replace(world.settings, sync=SyncSettings(watch=False, watch_debounce_ms=0))
    world.manager().sync()
    return source


class TestTheLastSyncFailure:
    def test_a_background_failure_is_said_here_and_in_a_new_process_until_a_sync_goes_through(
        self, world: World, scripted: _ScriptedSource
    ) -> None:
        scripted.errors = [StoreError("memory.db: database is locked")]
        watcher = world.manager()
        watcher.start(watch=False)
        try:
            watcher.request_sync(SyncTrigger.WATCH)
            assert wait_until(lambda: watcher.status().last_sync_failure is not None)
        finally:
            watcher.close()

        said = world.manager().status()  # another process, the same log

        failure = said.last_sync_failure
        assert failure is not None
        assert (failure.at, failure.trigger) == (world.clock.now().isoformat(), "watch")
        assert failure.reasons == ("StoreError: memory.db: database is locked",)
        assert said.events_pending == 0  # the verdict is no work for the handlers

        world.manager().sync()  # goes through

        after = world.manager().status()
        assert after.last_sync_failure is None
        assert after.events_pending == 0
        recorded = [type(r.event) for r in world.log.tail(2)]
        assert recorded[-1] is events.SyncRecovered

    def test_a_search_sync_that_fails_is_said_with_its_trigger(
        self, world: World, scripted: _ScriptedSource
    ) -> None:
        scripted.errors = [StoreError("memory.db: disk I/O error")]
        scripted.write("memory/new.md", NOTE)  # the search scans

        with pytest.raises(StoreError):
            world.manager().refresh(SyncTrigger.SEARCH)

        failure = world.manager().status().last_sync_failure
        assert failure is not None and failure.trigger == "search"

    def test_a_change_that_could_not_be_written_is_named_with_its_error(
        self, world: World, scripted: _ScriptedSource
    ) -> None:
        scripted.write("memory/a.md", NOTE)

        def disk_full(*args: object, **kwargs: object) -> object:
            raise StoreError("memory.db: database or disk is full")

        world.store.replace_file = disk_full  # type: ignore[method-assign,assignment]
        with pytest.raises(SyncFailed):
            world.manager().sync()

        failure = world.manager().status().last_sync_failure
        assert failure is not None and failure.trigger == "explicit"
        assert failure.reasons == ("memory/a.md: StoreError: memory.db: database or disk is full",)

    def test_at_most_three_reasons_are_kept_one_line_each(self, world: World) -> None:
        failures = [
            HandlerFailure("index_file", "file_changed", n, f"memory/{c}.md", "OSError: EIO")
            for n, c in enumerate("abcde", start=1)
        ]
        failures[0] = replace(failures[0], error="OSError: " + "x" * 300)

        world.application().verdicts().failed(SyncTrigger.WATCH, SyncFailed(failures))

        failure = world.manager().status().last_sync_failure
        assert failure is not None
        assert failure.reasons[1:] == ("memory/b.md: OSError: EIO", "and 3 more")
        assert len(failure.reasons[0]) == 200 and failure.reasons[0].endswith("...")

    def test_a_password_in_the_reason_is_masked(
        self, world: World, scripted: _ScriptedSource
    ) -> None:
        scripted.errors = [StoreError("cannot reach postgresql://memlane:hunter2@db:5432/m")]

        with pytest.raises(StoreError):
            world.manager().sync()

        failure = world.manager().status().last_sync_failure
        assert failure is not None
        assert "hunter2" not in failure.reasons[0] and "***" in failure.reasons[0]

    def test_a_failure_the_log_cannot_take_is_said_by_this_process_and_logged(
        self, world: World, scripted: _ScriptedSource
    ) -> None:
        scripted.errors = [StoreError("memory.db: disk I/O error")]
        manager = world.manager()

        def log_down(*args: object) -> list[int]:
            raise EventLogError("memory.db: disk I/O error")

        world.log.append = log_down  # type: ignore[method-assign,assignment]
        with capture_logs() as logs, pytest.raises(StoreError):
            manager.sync()

        failure = manager.status().last_sync_failure
        assert failure is not None and failure.reasons == ("StoreError: memory.db: disk I/O error",)
        assert any(e["event"] == "sync_failure_not_logged" for e in logs)

    def test_syncs_without_a_failure_before_them_write_nothing(
        self, world: World, scripted: _ScriptedSource
    ) -> None:
        before = world.log.last_position()

        world.manager().sync()
        world.manager().refresh()

        assert world.log.last_position() == before  # a read-only index can still be synced
        assert world.manager().status().last_sync_failure is None

    def test_a_refused_mass_deletion_is_said_by_a_later_process_until_a_sync_goes_through(
        self, world: World, scripted: _ScriptedSource
    ) -> None:
        """A later `status` (another process) said "Dirty: no" and nothing of the refusal: only
        the process that was refused knew, and the index stayed behind the files."""
        for name in "abcd":
            scripted.write(f"memory/{name}.md", NOTE)
        world.manager().sync()
        for name in "abcd":
            scripted.delete(f"memory/{name}.md")

        with pytest.raises(MassDeletion):
            world.manager().sync()

        said = world.manager().status()  # another process, the same log
        failure = said.last_sync_failure
        assert failure is not None and failure.trigger == "explicit"
        assert failure.reasons[0].startswith("sync stopped before removing anything: it would ")
        assert failure.reasons[1] == (
            "if they were deleted on purpose: memlane index --allow-mass-delete"
        )
        assert said.dirty

        world.manager().sync(allow_mass_delete=True)

        after = world.manager().status()
        assert after.last_sync_failure is None and not after.dirty

    def test_a_refusal_of_the_background_sync_is_recorded_once_however_often_it_retries(
        self, world: World, scripted: _ScriptedSource
    ) -> None:
        for name in "abcd":
            scripted.write(f"memory/{name}.md", NOTE)
        world.manager().sync()
        for name in "abcd":
            scripted.delete(f"memory/{name}.md")
        watcher = world.manager()
        before = world.log.last_position()

        for _ in range(3):  # what run_unless_read_only gives the scheduler: None, no error
            assert watcher.refresh(SyncTrigger.WATCH) is None

        verdicts = [r.event for r in world.log.tail(10) if r.position > before]
        assert [type(e) for e in verdicts] == [events.SyncFailed]
        failure = world.manager().status().last_sync_failure
        assert failure is not None and failure.trigger == "watch"
