"""Adapter part: one scan's walk of the memory notes on disk (FilesystemMemorySource.scan).

`NoteWalk` is the state of one scan and the steps that fill it: a folder is listed stat-only in
sorted order without following links; every link met is deferred to a second pass, so a file's
real path wins deduplication (files and folders are deduplicated by device and inode, which also
ends folder loops); a followed link must lead inside the allowed roots and to a note or folder
the read path would serve (_paths.py's checks). Which places are walked (MEMORY.md, memory/,
the extra paths) and what is read afterwards is filesystem.py's; this module is apart because
the walk is a traversal with its own rules, tested through the scan.
"""

# ruff: noqa: PTH116, PTH119
# (str paths with os.scandir keep a 10k-file scan stat-bound; pathlib objects would double it)

from __future__ import annotations

import os
import stat as stat_mod
from collections import deque
from dataclasses import dataclass, field
from typing import Final

from memlane.adapters.sources._paths import (
    folder_target_problem,
    has_suffix,
    is_ignored_dir,
    is_within_any,
    note_target_problem,
)
from memlane.domain.sources import FileStat, SourceIssue, is_utf8_name

NOTE_SUFFIX: Final = ".md"
OUTSIDE_HINT: Final = (
    "symlink target is outside the workspace and extra paths (add it as an extra path)"
)


@dataclass(slots=True)
class NoteWalk:
    """Mutable state of one scan: dedupe sets and what was found."""

    allowed: list[str]
    files: list[FileStat] = field(default_factory=list)
    issues: list[SourceIssue] = field(default_factory=list)
    seen_files: set[tuple[int, int]] = field(default_factory=set)
    seen_dirs: set[tuple[int, int]] = field(default_factory=set)
    linked_dirs: list[str] = field(default_factory=list)
    deferred: deque[tuple[str, str]] = field(default_factory=deque)  # symlinks: (path, rel)

    def add_file(self, path: str, rel: str) -> None:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            self.issues.append(SourceIssue(path=rel, reason="broken symlink"))
            return
        except OSError as exc:
            self.issues.append(SourceIssue(path=rel, reason=f"cannot stat: {exc.strerror}"))
            return
        self.record(st, rel)

    def record(self, st: os.stat_result, rel: str) -> None:
        if not stat_mod.S_ISREG(st.st_mode):
            self.issues.append(SourceIssue(path=rel, reason="not a regular file"))
            return
        key = (st.st_dev, st.st_ino)
        if key in self.seen_files:
            return
        self.seen_files.add(key)
        self.files.append(FileStat(source="memory", path=rel, mtime=st.st_mtime, size=st.st_size))

    def walk_dir(self, root: str, root_rel: str) -> bool:
        """Walk a folder in sorted order without following links (they are deferred).

        Returns False when the folder was already walked (a loop or a second route to it).
        """
        try:
            root_st = os.stat(root)
        except OSError as exc:
            self.issues.append(SourceIssue(path=root_rel, reason=f"cannot stat: {exc.strerror}"))
            return False
        if not self._enter(root_st):
            return False
        stack = [(root, root_rel)]
        while stack:
            dir_path, dir_rel = stack.pop()
            try:
                with os.scandir(dir_path) as entries:
                    children = sorted(entries, key=lambda e: e.name, reverse=True)
            except OSError as exc:
                self.issues.append(
                    SourceIssue(path=dir_rel, reason=f"unreadable folder: {exc.strerror}")
                )
                continue
            for entry in children:
                pushed = self._visit(entry, _join_rel(dir_rel, entry.name))
                if pushed is not None:
                    stack.append(pushed)
        return True

    def _visit(self, entry: os.DirEntry[str], rel: str) -> tuple[str, str] | None:
        """Handle one directory entry; return a folder to descend into, if any."""
        name = entry.name
        is_note = has_suffix(name, NOTE_SUFFIX)
        try:
            if entry.is_symlink():
                self.deferred.append((entry.path, rel))
                return None
            if entry.is_dir(follow_symlinks=False):
                if is_ignored_dir(name):
                    return None
                if not is_utf8_name(name):
                    self.issues.append(
                        SourceIssue(path=rel, reason="folder name is not valid UTF-8")
                    )
                    return None
                if not self._enter(entry.stat(follow_symlinks=False)):
                    return None
                return (entry.path, rel)
            if not is_note:
                return None
            if not is_utf8_name(name):
                self.issues.append(SourceIssue(path=rel, reason="file name is not valid UTF-8"))
                return None
            self.record(entry.stat(follow_symlinks=False), rel)
        except FileNotFoundError:
            return None  # vanished while listing: the next scan will tell
        except OSError as exc:
            self.issues.append(SourceIssue(path=rel, reason=f"cannot stat: {exc.strerror}"))
        return None

    def follow_links(self) -> None:
        """Second pass: follow the links met so far, so real paths win deduplication."""
        while self.deferred:
            path, rel = self.deferred.popleft()
            self._follow_link(path, rel)

    def _follow_link(self, path: str, rel: str) -> None:
        name = os.path.basename(path)
        is_note = has_suffix(name, NOTE_SUFFIX)
        try:
            st = os.stat(path)
        except OSError:
            if is_note:
                self.issues.append(SourceIssue(path=rel, reason="broken symlink or symlink loop"))
            return
        is_dir = stat_mod.S_ISDIR(st.st_mode)
        if (is_dir and is_ignored_dir(name)) or (not is_dir and not is_note):
            return
        real = os.path.realpath(path)
        if not is_within_any(real, self.allowed):
            self.issues.append(SourceIssue(path=rel, reason=OUTSIDE_HINT))
            return
        problem = (
            folder_target_problem(real, self.allowed)
            if is_dir
            else note_target_problem(real, self.allowed, NOTE_SUFFIX)
        )
        if problem is not None:
            self.issues.append(SourceIssue(path=rel, reason=problem))
            return
        if not is_utf8_name(name):
            kind = "folder" if is_dir else "file"
            self.issues.append(SourceIssue(path=rel, reason=f"{kind} name is not valid UTF-8"))
            return
        if not is_dir:
            self.record(st, rel)
        elif self.walk_dir(path, rel):
            self.linked_dirs.append(real)

    def _enter(self, st: os.stat_result) -> bool:
        key = (st.st_dev, st.st_ino)
        if key in self.seen_dirs:
            return False
        self.seen_dirs.add(key)
        return True


def _join_rel(parent: str, name: str) -> str:
    return name if parent == "." else f"{parent}/{name}"
