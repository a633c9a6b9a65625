"""Port: the files memlane indexes (memory notes, session transcripts) and their watchers.

Error tree:

    SourceError
    ├── FileMissing        the file vanished (or never existed)
    ├── FileRefused        the path is outside the source's allowed roots, a symlink escape,
    │                      a `..` path, or not a kind of file this source serves
    ├── FileTooLarge       larger than the source's byte limit
    └── FileUnreadable     permission denied, I/O error, not a regular file
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from memlane.domain.sources import FileStat, Source, SourceIssue


class SourceError(Exception):
    """Base for every failure a FileSource may raise."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class FileMissing(SourceError):
    """The file does not exist (any more)."""


class FileRefused(SourceError):
    """The path is not one this source serves (outside its roots, escaping symlink, ...)."""


class FileTooLarge(SourceError):
    """The file exceeds the source's size limit."""


class FileUnreadable(SourceError):
    """The file exists but cannot be read."""


@dataclass(frozen=True, slots=True)
class ScanResult:
    """Every file a source serves right now, plus what it skipped and why."""

    files: list[FileStat]
    issues: list[SourceIssue] = field(default_factory=list)


class FileSource(Protocol):
    """Lists and reads the files of one source.

    Contract:
    * `scan` stats files without reading them; paths are unique, sorted, `/`-separated and in
      the indexed form described in `domain.sources.FileStat`; a file reachable through several
      paths (symlinks) is listed once; unreadable or refused entries go to `issues`, never raise;
    * `read_bytes(path, offset)` accepts only paths that `scan` could list (same rules, checked
      again on every call) and returns the bytes from `offset` to the end;
    * `stat(path)` returns the current FileStat or raises FileMissing;
    * a missing root directory is an issue, not an error.
    """

    @property
    def source(self) -> Source:
        """Which source this is: "memory" or "sessions"."""
        ...

    def scan(self) -> ScanResult:
        """List the files this source serves, with issues for what it skipped."""
        ...

    def stat(self, path: str) -> FileStat:
        """Return the current size and mtime of `path`; raise SourceError if unusable."""
        ...

    def read_bytes(self, path: str, offset: int = 0) -> bytes:
        """Return the content of `path` from byte `offset`; raise SourceError if unusable."""
        ...

    def watch_roots(self) -> list[str]:
        """Absolute directories (or files) a watcher should observe for this source."""
        ...


class ChangeWatcher(Protocol):
    """Observes directories and reports what changed in them, as soon as it sees it.

    Contract:
    * `start` returns at once; `on_change(paths)` is then called from one background thread,
      never concurrently with itself;
    * `paths` is never empty: sorted, distinct, real absolute paths of files the sources serve
      (created, modified, deleted; both names of a move), of folders deleted or moved (their
      files vanished without one event each), and of served files found in folders that came
      under watch later (they may predate the watch);
    * no debouncing: changes seen while `on_change` runs are delivered by the next call, so a
      burst costs few calls, but waiting for the burst to end is the consumer's choice (the
      application's scheduler debounces every sync trigger in one place);
    * an exception raised by `on_change` is logged and watching goes on;
    * resources stay bounded on large trees (ignored folders are never descended into).
    """

    def start(self, roots: Sequence[str], on_change: Callable[[Sequence[str]], None]) -> None:
        """Begin watching `roots` (folders or single files; missing ones once they appear)."""
        ...

    def stop(self) -> None:
        """Stop watching and release every resource; idempotent."""
        ...
