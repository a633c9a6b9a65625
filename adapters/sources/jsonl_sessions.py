"""Adapter: FileSource for session transcripts, the `*.jsonl` files of one sessions folder."""

# ruff: noqa: PTH100, PTH110, PTH118
# (str paths with os.scandir keep a 10k-file scan stat-bound; pathlib objects would double it)

from __future__ import annotations

import os
import stat as stat_mod
from typing import Final

from memlane.adapters.sources._paths import (
    check_real_prefixes,
    has_suffix,
    is_within,
    note_target_problem,
    read_regular,
    readable_issues,
    split_indexed_path,
    stat_regular,
)
from memlane.application.ports.file_source import FileRefused, ScanResult
from memlane.domain.sources import FileStat, Source, SourceIssue, is_utf8_name

_SUFFIX: Final = ".jsonl"
_PREFIX: Final = "sessions"


class JsonlSessionSource:
    """Transcripts directly inside `sessions_dir` (not recursive), served as `sessions/<name>`.

    A symlinked transcript is followed only when its target stays inside the sessions folder.
    `read_bytes(path, offset)` returns the bytes after `offset` so a caller can tail a growing
    transcript; telling growth from a rewrite (size below the last offset) is the caller's job.
    """

    def __init__(
        self, *, sessions_dir: str, max_file_bytes: int = 200_000_000, configured: bool = False
    ) -> None:
        self._dir = os.path.abspath(sessions_dir)
        self._max_file_bytes = max_file_bytes
        # Named by `sessions.dir`: a folder that is not there is a typo or an unmounted disk,
        # not an agent that has had no session yet.
        self._configured = configured

    @property
    def source(self) -> Source:
        return "sessions"

    @property
    def sessions_dir(self) -> str:
        return self._dir

    def scan(self) -> ScanResult:
        files: list[FileStat] = []
        issues: list[SourceIssue] = []
        try:
            with os.scandir(self._dir) as it:
                entries = list(it)
        except FileNotFoundError:
            if self._configured:
                reason = f"sessions folder does not exist: {self._dir} (sessions.dir)"
                return ScanResult(files=[], issues=[SourceIssue(_PREFIX, reason)])
            # A fresh agent has had no session yet: nothing to index, nothing wrong (issue #14).
            return ScanResult(files=[], issues=[])
        except OSError as exc:
            reason = f"unreadable sessions folder: {exc.strerror}"
            return ScanResult(files=[], issues=[SourceIssue(_PREFIX, reason)])
        real_dir = os.path.realpath(self._dir)
        seen: set[tuple[int, int]] = set()
        for entry in entries:
            if not has_suffix(entry.name, _SUFFIX):
                continue
            path = f"{_PREFIX}/{entry.name}"
            issue = self._check_entry(entry, real_dir)
            if issue is not None:
                issues.append(SourceIssue(path, issue))
                continue
            try:
                st = entry.stat(follow_symlinks=True)
            except FileNotFoundError:
                continue
            except OSError as exc:
                issues.append(SourceIssue(path, f"cannot stat: {exc.strerror}"))
                continue
            if not stat_mod.S_ISREG(st.st_mode):
                if not stat_mod.S_ISDIR(st.st_mode):
                    issues.append(SourceIssue(path, "not a regular file"))
                continue
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            files.append(FileStat("sessions", path, st.st_mtime, st.st_size))
        files.sort(key=lambda f: f.path)
        return ScanResult(files=files, issues=readable_issues(issues))

    @staticmethod
    def _check_entry(entry: os.DirEntry[str], real_dir: str) -> str | None:
        if not is_utf8_name(entry.name):
            return "file name is not valid UTF-8"
        if not entry.is_symlink():
            return None
        real = os.path.realpath(entry.path)
        if real == real_dir or not is_within(real, real_dir):
            return "symlink target is outside the sessions folder"
        if not os.path.exists(entry.path):
            return "broken symlink or symlink loop"
        return note_target_problem(real, [real_dir], _SUFFIX, "transcript")

    def stat(self, path: str) -> FileStat:
        st = stat_regular(path, self._resolve(path))
        return FileStat("sessions", path, st.st_mtime, st.st_size)

    def read_bytes(self, path: str, offset: int = 0) -> bytes:
        return read_regular(path, self._resolve(path), offset, self._max_file_bytes)

    def watch_roots(self) -> list[str]:
        return [os.path.realpath(self._dir)]

    def _resolve(self, path: str) -> str:
        segments = split_indexed_path(path)
        if len(segments) != 2 or segments[0] != _PREFIX or not has_suffix(segments[1], _SUFFIX):
            raise FileRefused(path, "not a transcript path (sessions/<name>.jsonl)")
        abs_path = os.path.join(self._dir, segments[1])
        real_dir = os.path.realpath(self._dir)
        check_real_prefixes(path, self._dir, abs_path, [real_dir])
        real = os.path.realpath(abs_path)
        if real != os.path.join(real_dir, segments[1]):  # a link: its target must be a transcript
            problem = note_target_problem(real, [real_dir], _SUFFIX, "transcript")
            if problem is not None:
                raise FileRefused(path, problem)
        return abs_path
