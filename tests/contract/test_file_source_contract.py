"""Contract: every FileSource (fake and real, memory and sessions) keeps the port's promises."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import pytest

from memlane.adapters.sources.filesystem import FilesystemMemorySource
from memlane.adapters.sources.jsonl_sessions import JsonlSessionSource
from memlane.adapters.sources.watcher import WatchdogChangeWatcher
from memlane.application.ports.file_source import (
    ChangeWatcher,
    FileMissing,
    FileRefused,
    FileSource,
    FileTooLarge,
)
from tests.fakes.file_source import FakeChangeWatcher, FakeFileSource

LIMIT = 64

# Static conformance: mypy checks that each implementation satisfies its port.
_fake_source: FileSource = FakeFileSource()
_memory_source: FileSource = FilesystemMemorySource(workspace=".")
_session_source: FileSource = JsonlSessionSource(sessions_dir=".")
_fake_watcher: ChangeWatcher = FakeChangeWatcher()
_real_watcher: ChangeWatcher = WatchdogChangeWatcher()


class Files(Protocol):
    """Arranges files behind a source, whatever stores them."""

    source: FileSource
    good: tuple[str, str]  # two paths the source serves, sorted
    wrong_kind: str  # a path of a kind the source does not serve

    def write(self, path: str, data: bytes) -> None: ...
    def delete(self, path: str) -> None: ...
    def set_mtime(self, path: str, mtime: float) -> None: ...


class FakeFiles:
    def __init__(self, fake: FakeFileSource, good: tuple[str, str], wrong_kind: str) -> None:
        self.fake = fake
        self.source: FileSource = fake
        self.good = good
        self.wrong_kind = wrong_kind

    def write(self, path: str, data: bytes) -> None:
        self.fake.write(path, data)

    def delete(self, path: str) -> None:
        self.fake.delete(path)

    def set_mtime(self, path: str, mtime: float) -> None:
        self.fake.set_mtime(path, mtime)


@dataclass
class DiskFiles:
    source: FileSource
    base: Path  # indexed paths are relative to this folder
    good: tuple[str, str]
    wrong_kind: str

    def write(self, path: str, data: bytes) -> None:
        target = self.base / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    def delete(self, path: str) -> None:
        (self.base / path).unlink()

    def set_mtime(self, path: str, mtime: float) -> None:
        os.utime(self.base / path, (mtime, mtime))


@pytest.fixture(
    params=[
        "fake-memory",
        "fake-sessions",
        pytest.param("filesystem", marks=pytest.mark.integration),
        pytest.param("jsonl", marks=pytest.mark.integration),
    ]
)
def files(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Files]:
    memory_paths = ("MEMORY.md", "memory/2026-01-05.md")
    session_paths = ("sessions/a.jsonl", "sessions/b.jsonl")
    if request.param == "fake-memory":
        yield FakeFiles(
            FakeFileSource("memory", max_file_bytes=LIMIT), memory_paths, "memory/x.txt"
        )
    elif request.param == "fake-sessions":
        fake = FakeFileSource("sessions", max_file_bytes=LIMIT)
        yield FakeFiles(fake, session_paths, "sessions/x.txt")
    elif request.param == "filesystem":
        ws = tmp_path / "ws"
        ws.mkdir()
        source = FilesystemMemorySource(workspace=str(ws), max_file_bytes=LIMIT)
        yield DiskFiles(source, ws, memory_paths, "memory/x.txt")
    else:
        (tmp_path / "sessions").mkdir()
        source_s = JsonlSessionSource(sessions_dir=str(tmp_path / "sessions"), max_file_bytes=LIMIT)
        yield DiskFiles(source_s, tmp_path, session_paths, "sessions/x.txt")


class TestScan:
    def test_an_empty_source_lists_no_files(self, files: Files) -> None:
        """Nothing written: no files (a missing folder may be an issue, never an error)."""
        assert files.source.scan().files == []

    def test_files_are_listed_sorted_with_size_mtime_and_source(self, files: Files) -> None:
        """Each file appears once, in path order, with its byte size and mtime."""
        second, first = files.good[1], files.good[0]
        files.write(second, b"two bytes?")
        files.write(first, b"x")
        files.set_mtime(first, 1_800_000_000.0)

        listed = files.source.scan().files

        assert [f.path for f in listed] == [first, second]
        assert [f.size for f in listed] == [1, 10]
        assert listed[0].mtime == pytest.approx(1_800_000_000.0)
        assert {f.source for f in listed} == {files.source.source}

    def test_files_of_another_kind_are_not_listed(self, files: Files) -> None:
        """Only the kind of file the source serves is listed."""
        files.write(files.good[0], b"ok")
        files.write(files.wrong_kind, b"no")

        assert [f.path for f in files.source.scan().files] == [files.good[0]]

    def test_a_deleted_file_disappears(self, files: Files) -> None:
        """Listing reflects the current state, not history."""
        files.write(files.good[0], b"a")
        files.write(files.good[1], b"b")
        files.delete(files.good[0])

        assert [f.path for f in files.source.scan().files] == [files.good[1]]


class TestStat:
    def test_stat_matches_the_scan_entry(self, files: Files) -> None:
        """`stat` gives the same FileStat as the listing."""
        files.write(files.good[0], b"hello")

        assert files.source.stat(files.good[0]) == files.source.scan().files[0]

    def test_stat_follows_edits(self, files: Files) -> None:
        """Size and mtime move when the file changes."""
        files.write(files.good[0], b"hello")
        files.write(files.good[0], b"hello world")
        files.set_mtime(files.good[0], 1_900_000_000.0)

        stat = files.source.stat(files.good[0])

        assert stat.size == 11
        assert stat.mtime == pytest.approx(1_900_000_000.0)

    def test_stat_of_a_missing_file_raises_file_missing(self, files: Files) -> None:
        """A path of the right kind that does not exist is missing, not refused."""
        with pytest.raises(FileMissing):
            files.source.stat(files.good[0])


class TestReadBytes:
    def test_the_whole_content_is_returned(self, files: Files) -> None:
        """Offset 0 returns every byte, unmodified (decoding is the caller's job)."""
        files.write(files.good[0], b"caf\xc3\xa9\n\xff")

        assert files.source.read_bytes(files.good[0]) == b"caf\xc3\xa9\n\xff"

    def test_an_offset_returns_only_the_tail(self, files: Files) -> None:
        """Tailing: the bytes after `offset`, and nothing at or past the end."""
        files.write(files.good[0], b"line one\nline two\n")

        assert files.source.read_bytes(files.good[0], 9) == b"line two\n"
        assert files.source.read_bytes(files.good[0], 18) == b""
        assert files.source.read_bytes(files.good[0], 100) == b""

    def test_a_missing_file_raises_file_missing(self, files: Files) -> None:
        """Vanished files are FileMissing."""
        files.write(files.good[0], b"x")
        files.delete(files.good[0])

        with pytest.raises(FileMissing):
            files.source.read_bytes(files.good[0])

    @pytest.mark.parametrize(
        "path", ["../../etc/passwd", "/etc/passwd", "memory/../../x.md", "a//b.md", "./MEMORY.md"]
    )
    def test_escaping_absolute_and_malformed_paths_are_refused(
        self, files: Files, path: str
    ) -> None:
        """Paths that `scan` could never list are refused before touching anything."""
        with pytest.raises(FileRefused):
            files.source.read_bytes(path)

    def test_a_file_of_another_kind_is_refused_even_if_it_exists(self, files: Files) -> None:
        """The source serves only its kind of file."""
        files.write(files.wrong_kind, b"secret")

        with pytest.raises(FileRefused):
            files.source.read_bytes(files.wrong_kind)

    def test_a_file_over_the_limit_raises_file_too_large(self, files: Files) -> None:
        """The size limit is enforced before reading, whatever the offset."""
        files.write(files.good[0], b"x" * (LIMIT + 1))

        with pytest.raises(FileTooLarge):
            files.source.read_bytes(files.good[0])
        with pytest.raises(FileTooLarge):
            files.source.read_bytes(files.good[0], LIMIT)

    def test_a_file_at_the_limit_is_read(self, files: Files) -> None:
        """The limit is inclusive."""
        files.write(files.good[0], b"y" * LIMIT)

        assert len(files.source.read_bytes(files.good[0])) == LIMIT

    def test_a_negative_offset_is_a_programming_error(self, files: Files) -> None:
        """Offsets come from the caller's own bookkeeping; negative ones are bugs."""
        files.write(files.good[0], b"x")

        with pytest.raises(ValueError, match="offset"):
            files.source.read_bytes(files.good[0], -1)


class TestFakeChangeWatcher:
    def test_a_trigger_reaches_the_callback_until_stopped(self) -> None:
        """The fake delivers batches synchronously and goes quiet after `stop`."""
        watcher = FakeChangeWatcher()
        batches: list[list[str]] = []
        watcher.start(["/w"], lambda paths: batches.append(list(paths)))

        watcher.trigger(["/w/MEMORY.md"])
        watcher.stop()
        watcher.stop()
        watcher.trigger(["/w/late.md"])

        assert batches == [["/w/MEMORY.md"]]
        assert watcher.roots == ["/w"]
        assert watcher.stop_calls == 2
