"""Issue #14 in the application, on fakes: quiet syncs write nothing, problems are kept with the
index, a read-only index is searched as it is, and status tells what the index recorded."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from memlane.application.issues import FileVersion, IssueBoard
from memlane.application.memory import MemoryManager
from memlane.application.ports.file_source import ScanResult
from memlane.application.ports.index_store import RecordedIssue, StoreReadOnly, SyncRecord
from memlane.application.sync_refusal import IndexFromNewerMemlane
from memlane.domain import events
from memlane.domain.config import MemorySettings, QuerySettings
from memlane.domain.index_meta import CHUNKER_VERSION
from tests.fakes.event_log import FakeEventLog
from tests.fakes.index_store import FakeIndexStore
from tests.unit.application.conftest import World, message

NOTE = "# Deploys\n\nWe deploy the ingest service to the eu-west cluster every Tuesday.\n"


class RecordingStore(FakeIndexStore):
    """The fake store, noting every write it is asked for; `read_only` refuses them."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []
        self.read_only = False

    def _write(self, name: str) -> None:
        if self.read_only:
            raise StoreReadOnly(f"{name}: the file system is read-only")
        self.writes.append(name)

    def replace_file(self, *args: Any, **kwargs: Any) -> None:
        self._write("replace_file")
        super().replace_file(*args, **kwargs)

    def set_meta(self, *args: Any, **kwargs: Any) -> None:
        self._write("set_meta")
        super().set_meta(*args, **kwargs)

    def touch_file(self, *args: Any, **kwargs: Any) -> None:
        self._write("touch_file")
        super().touch_file(*args, **kwargs)

    def delete_file(self, *args: Any, **kwargs: Any) -> None:
        self._write("delete_file")
        super().delete_file(*args, **kwargs)

    def set_vectors(self, model: str, vectors: Mapping[Any, Any]) -> None:
        self._write("set_vectors")
        super().set_vectors(model, vectors)

    def cache_put(self, *args: Any, **kwargs: Any) -> None:
        self._write("cache_put")
        super().cache_put(*args, **kwargs)

    def cache_prune(self, max_entries: int) -> int:
        self._write("cache_prune")
        return super().cache_prune(max_entries)

    def replace_issues(self, issues: Sequence[RecordedIssue]) -> None:
        self._write("replace_issues")
        super().replace_issues(issues)

    def record_sync(self, record: SyncRecord) -> None:
        self._write("record_sync")
        super().record_sync(record)


class RecordingLog(FakeEventLog):
    """The fake event log, noting every write (the store's read-only flag refuses them)."""

    def __init__(self, store: RecordingStore) -> None:
        super().__init__()
        self.store = store

    def append(self, batch: Sequence[events.Event]) -> list[int]:
        self.store._write("append")
        return super().append(batch)

    def track(self, handler: str, position: int) -> None:
        self.store._write("track")
        super().track(handler, position)

    def compact(self, keep_last: int = 1000) -> int:
        self.store._write("compact")
        return super().compact(keep_last)


@pytest.fixture
def recording() -> World:
    store = RecordingStore()
    world = World(store=store, log=RecordingLog(store))
    world.settings = MemorySettings(
        query=QuerySettings(min_score=0.0), sources=("memory", "sessions")
    )
    return world


def _store(world: World) -> RecordingStore:
    assert isinstance(world.store, RecordingStore)
    return world.store


class TestAQuietSyncWritesNothing:
    def test_nothing_changed_means_no_write_at_all(self, recording: World) -> None:
        recording.memory.write("MEMORY.md", NOTE)
        recording.memory.write("memory/blob.md", b"\x00\x01 binary")  # a problem, every time
        recording.sessions.write("sessions/a.jsonl", message("user", "hi") + "{broken\n")
        recording.manager().sync()
        _store(recording).writes.clear()

        report = recording.manager().sync()  # a new process: a fresh application, same index

        assert _store(recording).writes == []
        assert report.files_indexed == 0
        assert len(report.issues) == 2

    def test_a_change_is_written_and_recorded(self, recording: World) -> None:
        manager = recording.manager()
        recording.memory.write("MEMORY.md", NOTE)
        manager.sync()
        recording.memory.write("memory/new.md", "# New\n\nA new note.\n")
        _store(recording).writes.clear()

        manager.sync()

        assert "replace_file" in _store(recording).writes
        assert "record_sync" in _store(recording).writes


def _read_only_with_a_new_note(world: World) -> MemoryManager:
    """An indexed note, a new one the index lacks, the store read-only; a fresh process."""
    world.memory.write("MEMORY.md", NOTE)
    world.manager().sync()
    world.memory.write("memory/new.md", "# New\n\nThe ingest service moved.\n")
    _store(world).read_only = True
    return world.manager()


class TestAReadOnlyIndex:
    def test_search_answers_and_says_once_that_it_could_not_sync(self, recording: World) -> None:
        manager = _read_only_with_a_new_note(recording)

        assert manager.refresh() is None
        first = manager.search("ingest service")
        assert manager.refresh() is None
        second = manager.search("ingest service")

        assert [r.path for r in first.results] == ["MEMORY.md"]
        assert [w for w in first.warnings if "could not sync" in w] != []
        assert not [w for w in second.warnings if "could not sync" in w]
        assert manager.status().read_only is not None

    def test_a_failed_first_sync_of_a_server_is_said_by_the_next_search(
        self, recording: World
    ) -> None:
        """`memlane mcp` runs its first sync itself, not through a search: a read-only index
        failed it, and the searches after answered from the stale index without a word."""
        manager = _read_only_with_a_new_note(recording)

        with pytest.raises(Exception, match="read-only"):
            manager.sync(wait_for_vectors=False)  # what the server's start-up runs
        found = manager.search("ingest service")

        assert [w for w in found.warnings if "could not sync" in w] != []

    def test_once_writable_again_the_state_clears_and_a_new_episode_is_said_again(
        self, recording: World
    ) -> None:
        """A long-lived server saw the index read-only once and said so in `status` for the
        rest of its life, though its syncs wrote again after the mount was fixed."""
        manager = _read_only_with_a_new_note(recording)  # the server
        assert manager.refresh() is None  # a search's sync, skipped
        first = manager.search("ingest service")
        _store(recording).read_only = False

        assert manager.refresh() is not None  # the next one writes the new note
        fixed = manager.search("ingest service")
        status_after_fix = manager.status().read_only
        recording.memory.write("memory/later.md", "# Later\n\nThe ingest queue grew.\n")
        _store(recording).read_only = True
        assert manager.refresh() is None
        again = manager.search("ingest queue")

        def said(warnings: Sequence[str]) -> bool:
            return any("could not sync" in w for w in warnings)

        assert said(first.warnings) and not said(fixed.warnings)
        assert "memory/new.md" in [r.path for r in fixed.results]
        assert status_after_fix is None
        assert said(again.warnings)  # a new episode, said once more
        assert manager.status().read_only is not None

    def test_a_sync_with_nothing_to_write_does_not_clear_it(self, recording: World) -> None:
        """A quiet sync goes through a read-only store without a write: that proves nothing."""
        manager = _read_only_with_a_new_note(recording)
        assert manager.refresh() is None  # refused: the new note needs a write
        recording.memory.delete("memory/new.md")  # nothing left to write

        assert manager.refresh() is not None  # it goes through
        assert manager.status().read_only is not None

    def test_other_store_errors_are_not_hidden(self, recording: World) -> None:
        recording.memory.write("MEMORY.md", NOTE)
        manager = recording.manager()
        manager.sync()

        def broken() -> ScanResult:
            raise RuntimeError("disk on fire")

        recording.memory.scan = broken  # type: ignore[method-assign]
        with pytest.raises(RuntimeError, match="disk on fire"):
            manager.refresh()


def _index_writes(world: World) -> list[str]:
    """The writes to the index itself: the event log's (the refusal's verdict, which `status`
    in another process reads) are not."""
    return [w for w in _store(world).writes if w not in ("append", "track")]


class TestAnIndexOfANewerMemlane:
    """Two memlane versions sharing a state dir each rebuilt the index to their own chunking,
    embedding every chunk again each time the other had run."""

    def _newer(self, world: World) -> MemoryManager:
        world.memory.write("MEMORY.md", NOTE)
        world.manager().sync()
        stored = world.store.meta()
        assert stored is not None
        world.store.set_meta(replace(stored, chunker_version=stored.chunker_version + 1))
        world.memory.write("memory/new.md", "# New\n\nThe ingest service moved.\n")
        _store(world).writes.clear()
        return world.manager()

    def test_a_sync_refuses_before_writing_and_says_the_way_on(self, recording: World) -> None:
        manager = self._newer(recording)

        with pytest.raises(IndexFromNewerMemlane, match="index --force") as refused:
            manager.sync()

        assert f"chunker {CHUNKER_VERSION + 1}, this one {CHUNKER_VERSION}" in str(refused.value)
        assert _index_writes(recording) == []

    def test_searches_answer_from_it_as_it_is_and_say_why(self, recording: World) -> None:
        manager = self._newer(recording)

        assert manager.refresh() is None
        found = manager.search("deploys")

        assert [r.path for r in found.results] == ["MEMORY.md"]
        assert any("built by a newer memlane" in w for w in found.warnings)
        assert any("built by a newer memlane" in w for w in manager.status().warnings)
        assert _index_writes(recording) == []

    def test_what_the_newer_one_left_pending_is_not_handled_by_this_one(
        self, recording: World
    ) -> None:
        """The check came after the catch-up: an interrupted rebuild of the newer memlane,
        pending in the log, was run by this one, down to its own chunking."""
        manager = self._newer(recording)
        recording.log.append(
            [
                events.ReindexRequired(
                    occurred_at=datetime(2026, 12, 7, tzinfo=UTC), reason="chunking_changed"
                )
            ]
        )

        with pytest.raises(IndexFromNewerMemlane):
            manager.sync()

        stored = recording.store.meta()
        assert stored is not None and stored.chunker_version == CHUNKER_VERSION + 1
        assert [c.files for c in recording.store.counts() if c.source == "memory"] == [1]

    def test_status_says_it_once_and_who_indexes_the_changed_files(self, recording: World) -> None:
        manager = self._newer(recording)
        with pytest.raises(IndexFromNewerMemlane):
            manager.sync()

        warnings = manager.status(deep=True).warnings

        assert sum("built by a newer memlane" in w for w in warnings) == 1
        (changed,) = [w for w in warnings if "changed on disk" in w]
        assert "the memlane that built the index indexes them" in changed
        assert "the next sync" not in changed

    def test_force_rebuilds_it_with_this_one_on_purpose(self, recording: World) -> None:
        manager = self._newer(recording)

        report = manager.sync(force=True)

        stored = recording.store.meta()
        assert report.full_reindex and stored is not None
        assert stored.chunker_version == CHUNKER_VERSION
        assert manager.search("ingest service").warnings == ()


class TestProblemsAreKeptWithTheIndex:
    def test_a_new_process_sees_the_problems_of_files_it_did_not_read(
        self, recording: World
    ) -> None:
        recording.memory.write("MEMORY.md", NOTE)
        recording.memory.write("memory/blob.md", b"\x00\x01 binary")
        recording.manager().sync()

        fresh = recording.manager().status()

        assert [i.path for i in fresh.issues] == ["memory/blob.md"]

    def test_a_deleted_problem_file_takes_its_problem_along(self, recording: World) -> None:
        recording.memory.write("MEMORY.md", NOTE)
        recording.memory.write("memory/blob.md", b"\x00\x01 binary")
        recording.manager().sync()
        recording.memory.delete("memory/blob.md")

        recording.manager().sync()

        assert recording.manager().status().issues == []
        assert recording.store.issues() == []

    def test_a_fixed_file_is_read_again_and_its_problem_cleared(self, recording: World) -> None:
        recording.memory.write("memory/blob.md", b"\x00\x01 binary", mtime=1.0)
        manager = recording.manager()
        manager.sync()

        recording.memory.write("memory/blob.md", "# Fixed\n\nNow text.\n", mtime=2.0)
        manager.sync()

        assert manager.status().issues == []
        assert [f.path for f in recording.store.files("memory")] == ["memory/blob.md"]


class TestIssueBoard:
    def test_it_starts_from_what_the_store_recorded(self) -> None:
        store = FakeIndexStore()
        store.replace_issues([RecordedIssue("memory", "a.md", "binary", 1.0, 3)])

        board = IssueBoard(store)

        assert [i.path for i in board.all()] == ["a.md"]
        assert board.known_unreadable("memory", "a.md", FileVersion(1.0, 3))
        assert not board.known_unreadable("memory", "a.md", FileVersion(2.0, 3))

    def test_persist_writes_only_a_change(self) -> None:
        store = FakeIndexStore()
        board = IssueBoard(store)

        assert board.persist() is False
        board.report("memory", "a.md", "binary")
        assert board.persist() is True
        assert board.persist() is False
        store.replace_issues([])  # a rebuild's swap: the board is written again
        assert board.persist() is True


class TestStatusInANewProcess:
    def test_provider_model_and_clean_state_come_from_the_index(self, world: World) -> None:
        world.memory.write("MEMORY.md", NOTE)
        world.manager().sync()

        report = world.application().manager().status()

        assert (report.provider, report.model) == ("fake", "fake-bag-of-words")
        assert report.search_mode == "hybrid"
        assert report.dirty is False
        assert report.last_synced_at is not None and report.last_sync_reason == "explicit"

    def test_keyword_only_by_request_is_keyword_mode(self, world: World) -> None:
        world.memory.write("MEMORY.md", NOTE)
        world.embedder = None
        world.manager().sync()

        report = world.manager().status()

        assert report.search_mode == "keyword"

    def test_a_logged_rebuild_nobody_ran_is_dirty_then_one_full_reindex(self, world: World) -> None:
        world.memory.write("MEMORY.md", NOTE)
        world.memory.write("memory/b.md", "# B\n\nAnother note.\n")
        world.manager().sync()
        interrupted = events.ReindexRequired(
            occurred_at=datetime(2026, 12, 1, tzinfo=UTC), reason="user_requested"
        )
        world.log.append([interrupted])  # what a SIGKILL during `index --force` leaves

        assert world.manager().status().dirty is True
        report = world.application().manager().sync()

        assert report.full_reindex is True
        assert report.files_indexed == 2
        # Issue #32: each file counted once, not again as "unchanged" by the detection after it.
        assert report.files_unchanged == 0
