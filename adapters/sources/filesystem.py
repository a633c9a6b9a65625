"""Adapter: FileSource for memory notes (MEMORY.md, memory/**/*.md, extra paths) on local disk.

This module knows the places notes come from and serves reads; one scan's walk of them (folders
listed, links followed second, deduplication) is _note_walk.py's.
"""

# ruff: noqa: PTH100, PTH110, PTH111, PTH112, PTH114, PTH118, PTH206
# (str paths with os.scandir keep a 10k-file scan stat-bound; pathlib objects would double it)

from __future__ import annotations

import os
import stat as stat_mod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from memlane.adapters.sources._note_walk import NOTE_SUFFIX, OUTSIDE_HINT, NoteWalk
from memlane.adapters.sources._paths import (
    check_real_prefixes,
    folder_target_problem,
    has_suffix,
    is_ignored_dir,
    is_within,
    is_within_any,
    note_target_problem,
    read_regular,
    readable_issues,
    split_indexed_path,
    stat_regular,
)
from memlane.application.ports.file_source import FileRefused, ScanResult, SourceError
from memlane.domain.sources import FileStat, Source, SourceIssue, is_utf8_name

_TOP_LEVEL_NAMES: Final = ("MEMORY.md", "memory.md")
_MEMORY_DIR: Final = "memory"


@dataclass(frozen=True, slots=True)
class _Area:
    """One place notes come from: a folder walked recursively, or one file."""

    root: str  # absolute, lexical (symlinks not resolved)
    rel: str  # `root` in indexed form ("memory", "../notes", "." for the workspace)
    is_dir: bool
    exact_name: bool = False  # MEMORY.md / memory.md: the name itself is the rule


class FilesystemMemorySource:
    """Memory notes under a workspace plus configured extra paths, read from the local disk.

    Listing is stat-only and deterministic (sorted). Folders in `IGNORED_DIRS` and hidden
    folders are never entered. Symlinks (files or folders, including a symlinked `memory/`)
    are followed only when their resolved target stays inside the workspace or an extra path
    root; others are skipped and reported. A file reachable through several paths is listed
    once (first discovery wins: MEMORY.md, memory.md, memory/, extra paths in order).
    Every read re-checks the path against the same rules.
    """

    def __init__(
        self, *, workspace: str, extra_paths: Sequence[str] = (), max_file_bytes: int = 10_000_000
    ) -> None:
        self._workspace = os.path.abspath(workspace)
        self._extras = _normalise_extra_paths(self._workspace, extra_paths)
        self._max_file_bytes = max_file_bytes

    @property
    def source(self) -> Source:
        return "memory"

    @property
    def workspace(self) -> str:
        return self._workspace

    @property
    def extra_paths(self) -> list[str]:
        """The extra paths as absolute, deduplicated paths, in configured order."""
        return list(self._extras)

    @property
    def indexed_extra_roots(self) -> list[str]:
        """The extra paths as the index names them: relative to the workspace, '/'-separated
        (`../shared/notes` for a folder beside it), in configured order."""
        return [os.path.relpath(e, self._workspace).replace(os.sep, "/") for e in self._extras]

    # ----------------------------------------------------------------------------- listing

    def scan(self) -> ScanResult:
        walk = self._walk_everything()
        files = sorted(walk.files, key=lambda f: f.path)
        return ScanResult(files=files, issues=readable_issues(walk.issues))

    def watch_roots(self) -> list[str]:
        """Real paths of MEMORY.md, memory.md, memory/, extra roots and followed folder links.

        Files are given as files (a watcher observes their parent non-recursively); folders
        are meant to be watched recursively, minus ignored folders. A root that is itself a
        symlink (an extra path `~/shared -> /mnt/a`) is given twice: its real path, watched, and
        the link, which a watcher follows as a link (its folder, for its name), so pointing it
        elsewhere is seen: the real path alone kept the old target watched and said nothing.
        """
        walk = self._walk_everything()
        roots: list[str] = []
        links: list[str] = []
        for area in self._areas():
            real = os.path.realpath(area.root)
            if os.path.lexists(area.root) and not is_within_any(real, walk.allowed):
                continue  # an escaping symlink: reported by scan, never watched
            roots.append(real)
            if os.path.islink(area.root):
                links.append(area.root)
        roots.extend(walk.linked_dirs)
        kept = _drop_nested(roots)
        return kept + [link for link in links if not is_within_any(link, kept)]

    def _areas(self) -> list[_Area]:
        ws = self._workspace
        areas = [
            _Area(os.path.join(ws, name), name, is_dir=False, exact_name=True)
            for name in _TOP_LEVEL_NAMES
        ]
        areas.append(_Area(os.path.join(ws, _MEMORY_DIR), _MEMORY_DIR, is_dir=True))
        for extra, rel in zip(self._extras, self.indexed_extra_roots, strict=True):
            areas.append(_Area(extra, rel, is_dir=os.path.isdir(extra)))
        return areas

    def _allowed_real_roots(self) -> list[str]:
        return [os.path.realpath(p) for p in (self._workspace, *self._extras)]

    def _walk_everything(self) -> NoteWalk:
        walk = NoteWalk(allowed=self._allowed_real_roots())
        if not os.path.isdir(self._workspace):
            walk.issues.append(SourceIssue(path=".", reason="workspace folder does not exist"))
        for name in _TOP_LEVEL_NAMES:
            self._add_top_level(walk, name)
        self._add_memory_dir(walk)
        for area in self._areas()[3:]:
            self._add_extra(walk, area)
        walk.follow_links()
        return walk

    def _add_top_level(self, walk: NoteWalk, name: str) -> None:
        path = os.path.join(self._workspace, name)
        try:
            lst = os.lstat(path)
        except OSError:
            return
        if stat_mod.S_ISLNK(lst.st_mode):
            walk.deferred.append((path, name))
        else:
            walk.record(lst, name)

    def _add_memory_dir(self, walk: NoteWalk) -> None:
        path = os.path.join(self._workspace, _MEMORY_DIR)
        if not os.path.lexists(path):
            ws = self._workspace
            if not any(os.path.lexists(os.path.join(ws, n)) for n in _TOP_LEVEL_NAMES):
                walk.issues.append(
                    SourceIssue(path=_MEMORY_DIR, reason="no MEMORY.md and no memory/ folder")
                )
            return
        if os.path.islink(path) and not is_within_any(os.path.realpath(path), walk.allowed):
            walk.issues.append(SourceIssue(path=_MEMORY_DIR, reason=OUTSIDE_HINT))
            return
        if os.path.islink(path):
            problem = folder_target_problem(os.path.realpath(path), walk.allowed)
            if problem is not None:
                walk.issues.append(SourceIssue(path=_MEMORY_DIR, reason=problem))
                return
        if not os.path.isdir(path):
            walk.issues.append(SourceIssue(path=_MEMORY_DIR, reason="memory is not a folder"))
            return
        if os.path.islink(path):
            walk.linked_dirs.append(os.path.realpath(path))
        walk.walk_dir(path, _MEMORY_DIR)

    def _add_extra(self, walk: NoteWalk, area: _Area) -> None:
        if not is_utf8_name(area.rel):  # a `${VAR}` of raw bytes, say: no path below is text
            walk.issues.append(SourceIssue(path=area.rel, reason="extra path is not valid UTF-8"))
        elif not os.path.exists(area.root):
            reason = "extra path does not exist"
            if os.path.lexists(area.root):
                reason = "extra path is a broken symlink"
            walk.issues.append(SourceIssue(path=area.rel, reason=reason))
        elif area.is_dir:
            walk.walk_dir(area.root, area.rel)
        elif not has_suffix(area.root, NOTE_SUFFIX):
            walk.issues.append(SourceIssue(path=area.rel, reason="extra path is not a .md file"))
        else:
            walk.add_file(area.root, area.rel)

    # ----------------------------------------------------------------------------- reading

    def stat(self, path: str) -> FileStat:
        abs_path = self._resolve(path)
        st = stat_regular(path, abs_path)
        return FileStat(source="memory", path=path, mtime=st.st_mtime, size=st.st_size)

    def read_bytes(self, path: str, offset: int = 0) -> bytes:
        abs_path = self._resolve(path)
        return read_regular(path, abs_path, offset, self._max_file_bytes)

    def _resolve(self, path: str) -> str:
        """Map an indexed path to an absolute one, or raise why it is not served."""
        segments = split_indexed_path(path)
        abs_path = os.path.normpath(os.path.join(self._workspace, *segments))
        if segments[0] == ".." and (
            os.path.relpath(abs_path, self._workspace).replace(os.sep, "/") != path
        ):
            raise FileRefused(path, "not the canonical form of this path")
        allowed = self._allowed_real_roots()
        first_error: SourceError | None = None
        for area in self._areas():
            if not self._area_serves(area, abs_path):
                continue
            try:
                check_real_prefixes(path, area.root, abs_path, allowed)
            except SourceError as exc:
                first_error = first_error or exc
                continue
            real = os.path.realpath(abs_path)
            if real != abs_path:  # a link on the way: the allow-list applies to its target too
                problem = note_target_problem(real, allowed, NOTE_SUFFIX)
                if problem is not None:
                    first_error = first_error or FileRefused(path, problem)
                    continue
            return abs_path
        raise first_error or FileRefused(path, "not a memory file of this workspace")

    @staticmethod
    def _area_serves(area: _Area, abs_path: str) -> bool:
        if not area.is_dir:
            return abs_path == area.root and (area.exact_name or has_suffix(abs_path, NOTE_SUFFIX))
        if abs_path == area.root or not is_within(abs_path, area.root):
            return False
        *folders, name = abs_path[len(area.root.rstrip(os.sep)) + 1 :].split(os.sep)
        return has_suffix(name, NOTE_SUFFIX) and not any(is_ignored_dir(f) for f in folders)


def _normalise_extra_paths(workspace: str, extra_paths: Sequence[str]) -> list[str]:
    """Trim, drop empties, resolve against the workspace, dedupe keeping the first."""
    result: list[str] = []
    for raw in extra_paths:
        text = raw.strip()
        if not text:
            continue
        absolute = os.path.normpath(os.path.join(workspace, os.path.expanduser(text)))
        if absolute not in result:
            result.append(absolute)
    return result


def _drop_nested(roots: Sequence[str]) -> list[str]:
    """Dedupe and drop roots already inside another (possibly not yet existing) root folder."""
    unique = sorted(set(roots))
    folders = [r for r in unique if os.path.isdir(r) or not has_suffix(r, NOTE_SUFFIX)]
    return [r for r in unique if not any(f != r and is_within(r, f) for f in folders)]
