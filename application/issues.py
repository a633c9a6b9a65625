"""Application: problems found while syncing, kept per file for `status` (never fatal)."""

from __future__ import annotations

import threading

from memlane.domain.sources import Source, SourceIssue


class IssueBoard:
    """The latest problem per (source, path); cleared when the file indexes cleanly."""

    def __init__(self) -> None:
        self._issues: dict[tuple[str, str], SourceIssue] = {}
        self._lock = threading.Lock()

    def report(self, source: Source | str, path: str, reason: str) -> None:
        """Record (or replace) the problem of one file."""
        with self._lock:
            self._issues[(source, path)] = SourceIssue(path=path, reason=reason)

    def clear(self, source: Source | str, path: str) -> None:
        """Forget the problem of one file."""
        with self._lock:
            self._issues.pop((source, path), None)

    def replace_scan_issues(self, source: Source, issues: list[SourceIssue]) -> None:
        """Replace the listing problems of one source (kept under the key `scan:<source>`)."""
        key = f"scan:{source}"
        with self._lock:
            for stale in [k for k in self._issues if k[0] == key]:
                del self._issues[stale]
            for issue in issues:
                self._issues[(key, issue.path)] = issue

    def all(self) -> list[SourceIssue]:
        """Return every current problem, sorted by path."""
        with self._lock:
            return sorted(self._issues.values(), key=lambda i: (i.path, i.reason))
