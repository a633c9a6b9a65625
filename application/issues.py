"""Application: problems found while syncing, kept per file for `status` (never fatal).

The board lives in memory and is kept with the index (`IndexStore.issues`): a new process
starts from what the last sync recorded, because most problem files are not read again (their
stat did not move), so they would otherwise vanish from `status` (issue #14).
"""

from __future__ import annotations

import threading
from collections.abc import Collection
from dataclasses import dataclass, replace

from memlane.application.ports.index_store import IndexStore, RecordedIssue
from memlane.domain.sources import Source, SourceIssue

# The area under which the last embedding-provider failure is kept (see provider_failures.py).
PROVIDER_AREA = "provider"

# How a file's embedding failure begins (`embedding_problem`): always the last of the file's
# problems, so a backfill that later gives the file its vectors takes it off alone.
_EMBEDDING_FAILED = "embedding failed ("
_SEPARATOR = "; "  # between a file's problems


def embedding_problem(error: object, fix: str | None) -> str:
    """The problem a file indexed without its vectors reports (its keyword rows are in)."""
    then = "vectors pending" if fix is None else f"no vectors: {fix}"
    return f"{_EMBEDDING_FAILED}{error}); indexed for keyword search, {then}"


def file_problems(problems: list[str]) -> str:
    """A file's problems as one issue's reason (an embedding failure last)."""
    return _SEPARATOR.join(problems)


def _without_embedding_failure(reason: str) -> str | None:
    """`reason` less its embedding failure: the same text when it has none, None when it was
    the only problem."""
    at = 0 if reason.startswith(_EMBEDDING_FAILED) else reason.find(_SEPARATOR + _EMBEDDING_FAILED)
    if at < 0:
        return reason
    return reason[:at] or None


@dataclass(frozen=True, slots=True)
class FileVersion:
    """The stat of the version of a file a problem was found in."""

    mtime: float
    size: int


class IssueBoard:
    """The latest problem per (source, path); cleared when the file indexes cleanly."""

    def __init__(self, store: IndexStore | None = None) -> None:
        self._store = store
        self._issues: dict[tuple[str, str], RecordedIssue] = {}
        self._loaded = store is None
        self._lock = threading.Lock()

    def _load(self) -> None:
        # Lazily, on first use: building the board must not touch the database.
        if not self._loaded:
            assert self._store is not None
            recorded = self._store.issues()
            for issue in recorded:
                self._issues.setdefault((issue.key, issue.path), issue)
            self._loaded = True

    def report(
        self,
        source: Source | str,
        path: str,
        reason: str,
        *,
        version: FileVersion | None = None,
    ) -> None:
        """Record (or replace) the problem of one file; `version` is the stat it was found in."""
        with self._lock:
            self._load()
            self._issues[(source, path)] = RecordedIssue(
                key=source,
                path=path,
                reason=reason,
                mtime=None if version is None else version.mtime,
                size=None if version is None else version.size,
            )

    def clear(self, source: Source | str, path: str) -> None:
        """Forget the problem of one file."""
        with self._lock:
            self._load()
            self._issues.pop((source, path), None)

    def replace_scan_issues(self, source: Source, issues: list[SourceIssue]) -> None:
        """Replace the listing problems of one source (kept under the key `scan:<source>`)."""
        key = f"scan:{source}"
        with self._lock:
            self._load()
            for stale in [k for k in self._issues if k[0] == key]:
                del self._issues[stale]
            for issue in issues:
                self._issues[(key, issue.path)] = RecordedIssue(key, issue.path, issue.reason)

    def retain(self, source: Source, paths: Collection[str]) -> None:
        """Forget the file problems of `source` whose file is no longer listed (deleted)."""
        with self._lock:
            self._load()
            for stale in [k for k in self._issues if k[0] == source and k[1] not in paths]:
                del self._issues[stale]

    def known_unreadable(self, source: Source, path: str, version: FileVersion) -> bool:
        """Whether this very version of a file could not be indexed (no need to read it again)."""
        with self._lock:
            self._load()
            issue = self._issues.get((source, path))
        return issue is not None and issue.mtime == version.mtime and issue.size == version.size

    def of_file(self, source: Source, path: str) -> RecordedIssue | None:
        """The problem of one file, if it has one."""
        with self._lock:
            self._load()
            return self._issues.get((source, path))

    def of_area(self, key: str) -> list[RecordedIssue]:
        """Return the problems kept under one key (`provider`, `index`, a source), by path."""
        with self._lock:
            self._load()
            found = [i for k, i in self._issues.items() if k[0] == key]
        return sorted(found, key=lambda i: i.path)

    def replace_area(self, key: str, issues: Collection[RecordedIssue]) -> bool:
        """Replace every problem kept under `key`; return whether anything changed."""
        with self._lock:
            self._load()
            before = {k: i for k, i in self._issues.items() if k[0] == key}
            after = {(key, i.path): i for i in issues}
            if before == after:
                return False
            for stale in before:
                del self._issues[stale]
            self._issues.update(after)
        return True

    def has_embedding_failures(self) -> bool:
        """Whether some file's problems include a failed embedding (a cheap, in-memory look)."""
        with self._lock:
            self._load()
            return any(
                _without_embedding_failure(i.reason) != i.reason for i in self._issues.values()
            )

    def clear_embedding_failures(self) -> bool:
        """Take the failed embedding off every file's problems (once each chunk has a vector of
        the active model); its other problems stay. Return whether anything changed."""
        changed = False
        with self._lock:
            self._load()
            for key, issue in list(self._issues.items()):
                left = _without_embedding_failure(issue.reason)
                if left == issue.reason:
                    continue
                changed = True
                if left is None:
                    del self._issues[key]
                else:
                    self._issues[key] = replace(issue, reason=left)
        return changed

    def all(self) -> list[SourceIssue]:
        """Return every current problem of the files and sources, sorted by path (a failed
        embedding provider is said by the runtime's warning instead, not as a file problem)."""
        with self._lock:
            self._load()
            found = [
                SourceIssue(path=i.path, reason=i.reason)
                for i in self._issues.values()
                if i.key != PROVIDER_AREA
            ]
        return sorted(found, key=lambda i: (i.path, i.reason))

    def persist(self) -> bool:
        """Write the board to the store when it differs from what is recorded; return whether.

        Compared with the store, not with what was loaded: a rebuild's swap replaces the
        recorded problems with none, and the board must then be written again.
        """
        if self._store is None:
            return False
        with self._lock:
            self._load()
            current = sorted(self._issues.values(), key=lambda i: (i.key, i.path))
        if self._store.issues() == current:
            return False
        self._store.replace_issues(current)
        return True
