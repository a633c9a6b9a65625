"""Integration: WatchdogChangeWatcher on real folders (inotify here)."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from memlane.adapters.sources.filesystem import FilesystemMemorySource
from memlane.adapters.sources.watcher import WatchdogChangeWatcher

pytestmark = [
    pytest.mark.integration,
    # watchdog's own inotify thread warns (harmlessly) when `mkdir -p` races its recursive
    # registration; under warnings-as-errors that warning would kill watchdog's thread.
    pytest.mark.filterwarnings("ignore:Callback with id .* already exists:RuntimeWarning"),
]

DEADLINE = 10.0


class Batches:
    """Collects delivered batches from the watcher's thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._batches: list[list[str]] = []
        self.fail_next = False
        self.busy = threading.Event()  # set while a held callback runs
        self.release = threading.Event()  # a held callback returns once this is set
        self.release.set()

    def __call__(self, paths: Sequence[str]) -> None:
        with self._lock:
            self._batches.append(list(paths))
            if self.fail_next:
                self.fail_next = False
                raise RuntimeError("callback failure")
        self.busy.set()
        self.release.wait(DEADLINE)
        self.busy.clear()

    @property
    def batches(self) -> list[list[str]]:
        with self._lock:
            return [list(b) for b in self._batches]

    @property
    def seen(self) -> set[str]:
        return {p for batch in self.batches for p in batch}


def wait_until(predicate: Callable[[], bool], timeout: float = DEADLINE) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def _write(path: Path, text: str = "note\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _fd_targets() -> dict[int, str]:
    """What each open descriptor of this process points at (a pipe's inode names that pipe)."""
    targets = {}
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # closed while listing
            targets[int(fd)] = os.readlink(f"/proc/self/fd/{fd}")
    return targets


def _kernel_watches() -> int:
    """Inotify watches this process holds, as the kernel reports them in fdinfo."""
    total = 0
    for fd in os.listdir("/proc/self/fdinfo"):
        try:
            with open(f"/proc/self/fdinfo/{fd}") as f:
                total += sum(1 for line in f if line.startswith("inotify wd:"))
        except OSError:
            continue
    return total


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    _write(workspace / "memory" / "existing.md")
    return workspace.resolve()


@pytest.fixture
def watch() -> Iterator[Callable[..., tuple[WatchdogChangeWatcher, Batches]]]:
    started: list[WatchdogChangeWatcher] = []

    def start(roots: Sequence[str], **options: Any) -> tuple[WatchdogChangeWatcher, Batches]:
        watcher = WatchdogChangeWatcher(**options)
        batches = Batches()
        watcher.start(roots, batches)
        started.append(watcher)
        return watcher, batches

    yield start
    for watcher in started:
        watcher.stop()


WatchFactory = Callable[..., tuple[WatchdogChangeWatcher, Batches]]


class TestNoteChanges:
    def test_created_modified_and_deleted_notes_are_reported(
        self, ws: Path, watch: WatchFactory
    ) -> None:
        _, batches = watch(FilesystemMemorySource(workspace=str(ws)).watch_roots())
        note = ws / "memory" / "new.md"

        _write(note)
        assert wait_until(lambda: str(note) in batches.seen)
        count = len(batches.batches)
        with open(note, "a") as f:
            f.write("more\n")
        assert wait_until(lambda: len(batches.batches) > count and str(note) in batches.batches[-1])
        count = len(batches.batches)
        note.unlink()
        assert wait_until(lambda: len(batches.batches) > count and str(note) in batches.batches[-1])

    def test_a_rename_reports_both_names(self, ws: Path, watch: WatchFactory) -> None:
        _, batches = watch([str(ws / "memory")])
        old, new = ws / "memory" / "existing.md", ws / "memory" / "renamed.md"

        old.rename(new)

        assert wait_until(lambda: {str(old), str(new)} <= batches.seen)

    def test_memory_md_is_watched_but_other_workspace_files_are_not(
        self, ws: Path, watch: WatchFactory
    ) -> None:
        _, batches = watch(FilesystemMemorySource(workspace=str(ws)).watch_roots())

        _write(ws / "README.md")
        _write(ws / "src" / "doc.md")
        _write(ws / "MEMORY.md")

        assert wait_until(lambda: str(ws / "MEMORY.md") in batches.seen)
        assert batches.seen.isdisjoint({str(ws / "README.md"), str(ws / "src" / "doc.md")})

    def test_irrelevant_names_and_ignored_folders_are_filtered(
        self, ws: Path, watch: WatchFactory
    ) -> None:
        (ws / "memory" / "node_modules" / "pkg").mkdir(parents=True)
        _, batches = watch([str(ws / "memory")])

        _write(ws / "memory" / "image.png")
        _write(ws / "memory" / "node_modules" / "pkg" / "README.md")
        _write(ws / "memory" / "marker.md")

        assert wait_until(lambda: str(ws / "memory" / "marker.md") in batches.seen)
        assert batches.seen == {str(ws / "memory" / "marker.md")}

    def test_changes_are_reported_without_waiting_for_a_quiet_period(
        self, ws: Path, watch: WatchFactory
    ) -> None:
        """The consumer debounces; the watcher reports while a stream of writes goes on."""
        _, batches = watch([str(ws / "memory")])
        first = ws / "memory" / "first.md"

        _write(first)
        stream_ended = False
        for i in range(40):  # a 4-second stream of writes, never quiet for long
            if str(first) in batches.seen:
                break
            _write(ws / "memory" / f"stream-{i}.md")
            time.sleep(0.1)
        else:
            stream_ended = True

        assert not stream_ended
        assert str(first) in batches.seen

    def test_changes_made_during_a_callback_arrive_in_the_next_call(
        self, ws: Path, watch: WatchFactory
    ) -> None:
        _, batches = watch([str(ws / "memory")])
        batches.release.clear()
        _write(ws / "memory" / "first.md")
        assert wait_until(batches.busy.is_set)
        notes = [ws / "memory" / f"n{i}.md" for i in range(30)]

        for note in notes:
            _write(note)
        time.sleep(0.3)  # let inotify hand over every event while the callback is held
        batches.release.set()

        assert wait_until(lambda: {str(n) for n in notes} <= batches.seen)
        assert len(batches.batches) <= 3


class TestTranscripts:
    def test_appending_to_a_transcript_is_reported(
        self, tmp_path: Path, watch: WatchFactory
    ) -> None:
        sessions = tmp_path / "sessions"
        transcript = _write(sessions / "s1.jsonl", '{"type":"message"}\n')
        _, batches = watch([str(sessions)])

        with open(transcript, "a") as f:
            f.write('{"type":"message"}\n')

        assert wait_until(lambda: str(transcript) in batches.seen)


class TestFolderChanges:
    def test_a_folder_created_after_start_is_watched(self, ws: Path, watch: WatchFactory) -> None:
        """memory/ holds an ignored folder, so it gets a non-recursive watch: new sub-folders
        must be added by the watcher itself, and notes written before that are still reported."""
        (ws / "memory" / ".git").mkdir()
        watcher, batches = watch([str(ws / "memory")])
        sub = ws / "memory" / "sub"

        _write(sub / "early.md")
        assert wait_until(lambda: str(sub / "early.md") in batches.seen)
        _write(sub / "deeper" / "late.md")

        assert wait_until(lambda: str(sub / "deeper" / "late.md") in batches.seen)
        assert watcher.mode == "native"

    def test_a_memory_folder_that_appears_later_is_watched(
        self, tmp_path: Path, watch: WatchFactory
    ) -> None:
        ws = tmp_path / "fresh"
        ws.mkdir()
        _, batches = watch(FilesystemMemorySource(workspace=str(ws)).watch_roots())
        note = ws.resolve() / "memory" / "2026-01-01.md"

        _write(note)
        assert wait_until(lambda: str(note) in batches.seen)
        second = note.parent / "2026-01-02.md"
        _write(second)

        assert wait_until(lambda: str(second) in batches.seen)

    def test_a_deleted_folder_is_reported(self, ws: Path, watch: WatchFactory) -> None:
        _write(ws / "memory" / "trip" / "day1.md")
        _, batches = watch([str(ws / "memory")])

        (ws / "memory" / "trip").rename(ws / "trip-moved-out")

        assert wait_until(lambda: str(ws / "memory" / "trip") in batches.seen)

    def test_an_ignored_folder_created_later_is_pruned_from_the_watch(
        self, ws: Path, watch: WatchFactory
    ) -> None:
        _write(ws / "memory" / "a" / "x.md")
        watcher, _ = watch([str(ws / "memory")])
        before = watcher.watched_dir_count

        for i in range(20):
            (ws / "memory" / "a" / "node_modules" / f"p{i}").mkdir(parents=True)

        assert wait_until(lambda: watcher.watch_count > 1)  # re-planned around node_modules
        assert watcher.watched_dir_count == before


class TestResources:
    @pytest.mark.slow
    def test_a_big_tree_is_watched_without_exhausting_descriptors(
        self, tmp_path: Path, watch: WatchFactory
    ) -> None:
        """20k files in 2k folders, most inside node_modules and .venv: only notes are watched."""
        ws = tmp_path / "big"
        for d in range(100):
            for f in range(10):
                _write(ws / "memory" / f"topic{d}" / f"n{f}.md")
        for d in range(1500):
            folder = ws / "memory" / "node_modules" / f"pkg{d}"
            folder.mkdir(parents=True)
            for f in range(8):
                (folder / f"f{f}.js").write_bytes(b"")
        for d in range(400):
            folder = ws / "memory" / "topic0" / ".venv" / f"lib{d}"
            folder.mkdir(parents=True)
            for f in range(7):
                (folder / f"m{f}.py").write_bytes(b"")
        fds_before, threads_before = _open_fds(), threading.active_count()

        watcher, batches = watch(FilesystemMemorySource(workspace=str(ws)).watch_roots())
        fds_watching, kernel_watches = _open_fds(), _kernel_watches()
        note = ws.resolve() / "memory" / "topic42" / "n3.md"
        _write(note, "edited")

        assert wait_until(lambda: str(note) in batches.seen)
        assert watcher.mode == "native"
        assert fds_watching - fds_before <= 10
        assert kernel_watches <= 110  # memory/, its 100 topics, the workspace: not 2000 folders
        assert watcher.watched_dir_count == 101
        assert threading.active_count() - threads_before <= watcher.watch_count + 5

    def test_stop_releases_threads_and_descriptors_and_is_idempotent(self, ws: Path) -> None:
        # The watcher's own threads and descriptors (inotify, the reader's wake-up pipe), not
        # the process's totals, which other threads of the test process change meanwhile.
        threads_before = set(threading.enumerate())
        fds_before = _fd_targets()
        watcher = WatchdogChangeWatcher()
        watcher.start([str(ws / "memory"), str(ws / "MEMORY.md")], Batches())
        started = set(threading.enumerate()) - threads_before
        opened = {
            fd: target
            for fd, target in _fd_targets().items()
            if fds_before.get(fd) != target
            and (target == "anon_inode:inotify" or target.startswith("pipe:"))
        }
        assert started
        assert "anon_inode:inotify" in opened.values()  # the measurement sees the watcher's

        watcher.stop()
        watcher.stop()

        assert [t.name for t in started if t.is_alive()] == []
        still = _fd_targets()
        assert {fd: target for fd, target in opened.items() if still.get(fd) == target} == {}

    def test_too_many_watches_fall_back_to_polling_with_a_reason(
        self, ws: Path, watch: WatchFactory
    ) -> None:
        (ws / "memory" / ".git").mkdir()
        for i in range(5):
            _write(ws / "memory" / f"t{i}" / "n.md")

        watcher, batches = watch([str(ws / "memory")], max_watches=2, polling_interval=0.1)
        _write(ws / "memory" / "t3" / "new.md")

        assert watcher.mode == "polling"
        assert watcher.fallback_reason is not None
        assert "max_watches=2" in watcher.fallback_reason
        assert wait_until(lambda: str(ws / "memory" / "t3" / "new.md") in batches.seen)


class TestCallbackFailures:
    def test_a_failing_callback_does_not_end_the_watch(self, ws: Path, watch: WatchFactory) -> None:
        _, batches = watch([str(ws / "memory")])
        batches.fail_next = True

        _write(ws / "memory" / "one.md")
        assert wait_until(lambda: str(ws / "memory" / "one.md") in batches.seen)
        _write(ws / "memory" / "two.md")

        assert wait_until(lambda: str(ws / "memory" / "two.md") in batches.seen)
