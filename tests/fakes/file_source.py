"""Fake: an in-memory FileSource (path -> bytes, settable mtime) and a hand-fed ChangeWatcher."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from memlane.application.ports.file_source import (
    FileMissing,
    FileRefused,
    FileTooLarge,
    FileUnreadable,
    ScanResult,
)
from memlane.domain.sources import FileStat, Source, SourceIssue

_SUFFIX = {"memory": ".md", "sessions": ".jsonl"}


@dataclass
class _Entry:
    data: bytes
    mtime: float


@dataclass
class FakeFileSource:
    """Files held in a dict, under the same path rules as the real sources.

    Memory paths must end in `.md` (any case) and may start with `..` segments only; session
    paths must be `sessions/<name>.jsonl`. `unreadable` paths raise FileUnreadable on read and
    show up as issues in `scan`, as the real sources report a file they cannot stat.
    """

    source_name: Source = "memory"
    max_file_bytes: int = 10_000_000
    roots: list[str] = field(default_factory=lambda: ["/fake/workspace"])
    unreadable: set[str] = field(default_factory=set)
    extra_issues: list[SourceIssue] = field(default_factory=list)
    reads: list[tuple[str, int]] = field(default_factory=list)
    _files: dict[str, _Entry] = field(default_factory=dict)
    _clock: float = 1_700_000_000.0

    @property
    def source(self) -> Source:
        return self.source_name

    # ------------------------------------------------------------------ arranging (tests only)

    def write(self, path: str, data: str | bytes, *, mtime: float | None = None) -> None:
        """Create or replace a file (of any kind: `scan` lists only served ones).

        The mtime defaults to a clock that ticks one second per write.
        """
        self._clock += 1.0
        raw = data.encode("utf-8") if isinstance(data, str) else data
        self._files[path] = _Entry(raw, self._clock if mtime is None else mtime)

    def append(self, path: str, data: str | bytes) -> None:
        """Grow a file, as a transcript grows; the mtime ticks."""
        raw = data.encode("utf-8") if isinstance(data, str) else data
        old = self._files[path].data if path in self._files else b""
        self.write(path, old + raw)

    def set_mtime(self, path: str, mtime: float) -> None:
        self._files[path].mtime = mtime

    def delete(self, path: str) -> None:
        del self._files[path]

    # ------------------------------------------------------------------ the port

    def scan(self) -> ScanResult:
        files = [
            FileStat(self.source_name, path, entry.mtime, len(entry.data))
            for path, entry in sorted(self._files.items())
            if path not in self.unreadable and self._serves(path)
        ]
        issues = [SourceIssue(p, "unreadable") for p in sorted(self.unreadable) if p in self._files]
        return ScanResult(files=files, issues=issues + list(self.extra_issues))

    def stat(self, path: str) -> FileStat:
        entry = self._get(path)
        return FileStat(self.source_name, path, entry.mtime, len(entry.data))

    def read_bytes(self, path: str, offset: int = 0) -> bytes:
        if offset < 0:
            raise ValueError(f"offset must be >= 0, got {offset}")
        entry = self._get(path)
        if path in self.unreadable:
            raise FileUnreadable(path, "permission denied")
        if len(entry.data) > self.max_file_bytes:
            raise FileTooLarge(path, f"{len(entry.data)} bytes exceeds {self.max_file_bytes}")
        self.reads.append((path, offset))
        return entry.data[offset:]

    def watch_roots(self) -> list[str]:
        return list(self.roots)

    def _get(self, path: str) -> _Entry:
        self._check(path)
        try:
            return self._files[path]
        except KeyError:
            raise FileMissing(path, "no such file") from None

    def _serves(self, path: str) -> bool:
        try:
            self._check(path)
        except FileRefused:
            return False
        return True

    def _check(self, path: str) -> None:
        if not path or path.startswith("/") or "\\" in path or "\x00" in path:
            raise FileRefused(path, "absolute or malformed path")
        segments = path.split("/")
        leading = 0
        while leading < len(segments) and segments[leading] == "..":
            leading += 1
        if self.source_name == "sessions" and leading:
            raise FileRefused(path, "not a transcript path")
        if leading == len(segments) or any(s in {"", ".", ".."} for s in segments[leading:]):
            raise FileRefused(path, "path is not in normal form")
        if not segments[-1].lower().endswith(_SUFFIX[self.source_name]):
            raise FileRefused(path, "not a kind of file this source serves")
        if self.source_name == "sessions" and (len(segments) != 2 or segments[0] != "sessions"):
            raise FileRefused(path, "not a transcript path")


@dataclass
class FakeChangeWatcher:
    """A ChangeWatcher whose changes are triggered by the test, synchronously."""

    roots: list[str] = field(default_factory=list)
    started: bool = False
    stop_calls: int = 0
    _on_change: Callable[[Sequence[str]], None] | None = None

    def start(self, roots: Sequence[str], on_change: Callable[[Sequence[str]], None]) -> None:
        if self.started:
            raise RuntimeError("watcher already started")
        self.roots = list(roots)
        self._on_change = on_change
        self.started = True

    def stop(self) -> None:
        self.stop_calls += 1
        self.started = False
        self._on_change = None

    def trigger(self, paths: Sequence[str] = ()) -> None:
        """Deliver one batch as the real watcher reports a change; no-op once stopped."""
        if self._on_change is not None:
            self._on_change(list(paths))
