"""Adapter helpers: path safety shared by the file sources and the watcher (no third-party code)."""

# ruff: noqa: PTH116, PTH118, PTH119, PTH206
# (str paths with os.scandir keep a 10k-file scan stat-bound; pathlib objects would double it)

from __future__ import annotations

import errno
import os
import stat as stat_mod
from collections.abc import Iterable, Sequence
from typing import Final

from memlane.application.ports.file_source import (
    FileMissing,
    FileRefused,
    FileTooLarge,
    FileUnreadable,
    SourceError,
)
from memlane.domain.sources import SourceIssue, is_utf8_name, readable_path

# Tool and dependency folders never listed nor watched; any other folder whose name starts with
# "." is skipped too (see `is_ignored_dir`). One constant for listing and watching, so the
# watcher never misses a file the lister indexes, nor watches one it skips.
IGNORED_DIRS: Final[frozenset[str]] = frozenset(
    {
        ".git",
        "node_modules",
        ".pnpm-store",
        ".venv",
        "venv",
        ".tox",
        "__pycache__",
        ".mypy_cache",
        ".cache",
        "site-packages",
        "dist",
        "build",
    }
)


def is_ignored_dir(name: str, ignored: Iterable[str] = IGNORED_DIRS) -> bool:
    """Say whether a folder named `name` is skipped: a tool folder or any hidden folder."""
    folded = name.strip().lower()
    return folded.startswith(".") or folded in ignored


def has_suffix(name: str, suffix: str) -> bool:
    """Match a file extension case-insensitively, requiring a non-empty stem."""
    return len(name) > len(suffix) and name.lower().endswith(suffix)


def readable_issues(issues: Iterable[SourceIssue]) -> list[SourceIssue]:
    """`issues` with their paths made readable: a scan's issues leave the source this way."""
    return [SourceIssue(path=readable_path(i.path), reason=i.reason) for i in issues]


def is_within(path: str, root: str) -> bool:
    """Lexical containment of two normalised absolute paths (`root` itself included)."""
    if path == root:
        return True
    prefix = root if root.endswith(os.sep) else root + os.sep
    return path.startswith(prefix)


def is_within_any(path: str, roots: Sequence[str]) -> bool:
    """Whether `path` lies inside (or is) one of `roots`."""
    return any(is_within(path, root) for root in roots)


def split_indexed_path(path: str) -> list[str]:
    """Split an indexed path into segments, refusing absolute and malformed forms.

    Leading `..` segments are allowed (extra paths outside the workspace); `..` anywhere
    else, empty segments, `.` segments, NUL bytes and backslashes are refused, and so are
    paths that are not valid UTF-8 (no scan lists such a file).
    """
    if not is_utf8_name(path):  # said readably: the error may end up in JSON or a log line
        raise FileRefused(readable_path(path), "path is not valid UTF-8")
    if not path or "\x00" in path or "\\" in path:
        raise FileRefused(path, "malformed path")
    if path.startswith("/") or (len(path) > 1 and path[1] == ":"):
        raise FileRefused(path, "absolute paths are refused")
    segments = path.split("/")
    leading = 0
    while leading < len(segments) and segments[leading] == "..":
        leading += 1
    for segment in segments[leading:]:
        if segment in {"", ".", ".."}:
            raise FileRefused(path, "path is not in normal form")
    if leading == len(segments):
        raise FileRefused(path, "path names no file")
    return segments


def check_real_prefixes(
    display: str, area_root: str, target: str, allowed_real_roots: Sequence[str]
) -> None:
    """Refuse `target` if any component from `area_root` down resolves outside the allowed roots.

    Checking every component (not only the final file) keeps reads consistent with listing,
    which refuses to descend through an escaping symlink even when a later link points back
    inside. Only the root and the components that are symlinks need resolving: below a
    resolved-inside folder, a plain entry stays inside.
    """
    relative = os.path.relpath(target, area_root)
    parts = [] if relative == "." else relative.split(os.sep)
    current = area_root
    _require_inside(display, current, allowed_real_roots)
    for part in parts:
        current = os.path.join(current, part)
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError as exc:
            raise FileMissing(display, "no such file") from exc
        except OSError as exc:
            raise _unreadable(display, exc) from exc
        if stat_mod.S_ISLNK(mode):
            _require_inside(display, current, allowed_real_roots)


def _require_inside(display: str, path: str, allowed_real_roots: Sequence[str]) -> None:
    if not os.path.lexists(path):
        raise FileMissing(display, "no such file")
    if not is_within_any(os.path.realpath(path), allowed_real_roots):
        raise FileRefused(display, "symlink target outside the allowed roots")


def note_target_problem(
    real: str, allowed_real_roots: Sequence[str], suffix: str, what: str = "note"
) -> str | None:
    """Why the real file `real` (a path after symlinks) may not be served as a note, or None.

    The allow-list applies to where a link leads, not only to the link's own name: the target
    must end in `suffix` and lie inside an allowed root without passing through a hidden or
    tool folder below that root, so `memory/x.md -> ../.env` or `-> ../.git/config` is refused
    while `memory/old.md -> ../archive/old.md` is served.
    """
    if not has_suffix(os.path.basename(real), suffix):
        return f"symlink target is not a {suffix} {what}"
    inside = [root for root in allowed_real_roots if is_within(real, root)]
    if not inside:
        return "symlink target outside the allowed roots"
    for root in inside:
        folders = os.path.relpath(real, root).split(os.sep)[:-1]
        if not any(is_ignored_dir(folder) for folder in folders):
            return None
    return "symlink target is in a hidden or tool folder"


def folder_target_problem(real: str, allowed_real_roots: Sequence[str]) -> str | None:
    """`note_target_problem` for a symlinked folder: its real path may not be (or be inside) a
    hidden or tool folder below the allowed root it lies in."""
    inside = [root for root in allowed_real_roots if is_within(real, root)]
    if not inside:
        return "symlink target outside the allowed roots"
    for root in inside:
        relative = os.path.relpath(real, root)
        folders = [] if relative == "." else relative.split(os.sep)
        if not any(is_ignored_dir(folder) for folder in folders):
            return None
    return "symlink target is in a hidden or tool folder"


def _unreadable(display: str, exc: OSError) -> SourceError:
    """The error for a file that could not be opened: a name too long for the file system is
    no file at all (its "File name too long" came with advice to check permissions and the
    disk), anything else is unreadable."""
    if exc.errno == errno.ENAMETOOLONG:
        return FileRefused(display, "a name in the path is longer than the file system allows")
    return FileUnreadable(display, exc.strerror or str(exc))


def stat_regular(display: str, abs_path: str) -> os.stat_result:
    """Stat (following symlinks) and require a regular file."""
    try:
        st = os.stat(abs_path)
    except FileNotFoundError as exc:
        raise FileMissing(display, "no such file") from exc
    except OSError as exc:
        raise _unreadable(display, exc) from exc
    if not stat_mod.S_ISREG(st.st_mode):
        raise FileUnreadable(display, "not a regular file")
    return st


def read_regular(display: str, abs_path: str, offset: int, max_bytes: int) -> bytes:
    """Read a regular file from `offset`, refusing files over `max_bytes` before reading.

    The file is opened non-blocking so a FIFO named like a note cannot hang the caller,
    and its type and size are checked on the open descriptor (no stat-then-open race).
    """
    if offset < 0:
        raise ValueError(f"offset must be >= 0, got {offset}")
    try:
        fd = os.open(abs_path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError as exc:
        raise FileMissing(display, "no such file") from exc
    except OSError as exc:
        raise _unreadable(display, exc) from exc
    try:
        st = os.fstat(fd)
        if not stat_mod.S_ISREG(st.st_mode):
            raise FileUnreadable(display, "not a regular file")
        if st.st_size > max_bytes:
            raise FileTooLarge(display, f"{st.st_size} bytes exceeds the {max_bytes}-byte limit")
        if offset >= st.st_size:
            return b""
        os.lseek(fd, offset, os.SEEK_SET)
        return _read_to_end(display, fd, offset, max_bytes)
    except SourceError:
        raise
    except OSError as exc:
        raise FileUnreadable(display, exc.strerror or str(exc)) from exc
    finally:
        os.close(fd)


def _read_to_end(display: str, fd: int, offset: int, max_bytes: int) -> bytes:
    budget = max_bytes - offset + 1  # one byte more than allowed reveals growth past the limit
    pieces: list[bytes] = []
    while budget > 0:
        piece = os.read(fd, min(budget, 1 << 20))
        if not piece:
            break
        pieces.append(piece)
        budget -= len(piece)
    if budget <= 0:
        raise FileTooLarge(display, f"grew past the {max_bytes}-byte limit while being read")
    return b"".join(pieces)
