"""Adapter: the change journal on Linux inotify, read without blocking at each request.

One inotify instance holds a watch on every folder of a folder root (ignored folders left out,
as the scan leaves them out) and on the parent of each file root and of each missing root,
where only the names that matter count. Nothing runs in the background: `seen()` drains what
the kernel queued (non-blocking reads), so its count covers every change whose system call
returned before the call. A new folder is watched when its creation is read (the walk of it
follows, and its creation counts as a change, so anything written into it before the watch
was added is caught by the scan that follows). Lost events (the kernel's queue overflowed
between two requests) count as a change and every root is watched again; a watch that could not
be added (the user's watch limit) makes `seen()` return None for good: the caller then scans
every time, as a fresh process would.
"""

# ruff: noqa: PTH112, PTH120, PTH206
# (str paths with os.scandir: a walk of thousands of folders stays stat-bound)

from __future__ import annotations

import ctypes
import ctypes.util
import os
import struct
import threading
import weakref
from collections.abc import Sequence

import structlog

from memlane.adapters.sources._paths import is_ignored_dir
from memlane.adapters.sources._watch_plan import nearest_existing

log = structlog.get_logger()

_IN_NONBLOCK = os.O_NONBLOCK
_IN_CLOEXEC = os.O_CLOEXEC
_IN_MODIFY = 0x2
_IN_ATTRIB = 0x4
_IN_CLOSE_WRITE = 0x8
_IN_MOVED_FROM = 0x40
_IN_MOVED_TO = 0x80
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_IN_Q_OVERFLOW = 0x4000
_IN_IGNORED = 0x8000
_IN_ONLYDIR = 0x1000000
_IN_ISDIR = 0x40000000
_MASK = (
    _IN_MODIFY
    | _IN_ATTRIB
    | _IN_CLOSE_WRITE
    | _IN_MOVED_FROM
    | _IN_MOVED_TO
    | _IN_CREATE
    | _IN_DELETE
    | _IN_DELETE_SELF
    | _IN_MOVE_SELF
    | _IN_ONLYDIR
)
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len (then len bytes of name)


class InotifyChangeJournal:
    """Counts the changes under `roots` (as `FileSource.watch_roots` names them)."""

    def __init__(self, roots: Sequence[str]) -> None:
        self._roots = list(roots)
        self._lock = threading.Lock()
        self._count = 0
        self._broken: str | None = None
        self._recursive: dict[int, str] = {}  # wd -> folder under a folder root
        self._names: dict[int, tuple[str, set[str]]] = {}  # wd -> (parent, names that count)
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        self._add = libc.inotify_add_watch
        self._add.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self._fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if self._fd < 0:
            self._broken = f"inotify_init1 failed: {os.strerror(ctypes.get_errno())}"
            return
        # A journal dropped without close() must not keep its watches for the process's life.
        self._finalizer = weakref.finalize(self, os.close, self._fd)
        self._plan()

    def seen(self) -> int | None:
        with self._lock:
            if self._broken is None:
                self._drain()
            if self._broken is not None:
                return None
            return self._count

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                self._finalizer()  # closes the descriptor, once
                self._fd = -1
            self._broken = self._broken or "closed"

    def _plan(self) -> None:
        """Watch every root (again): adding a watch twice is harmless, the kernel reuses it."""
        for root in self._roots:
            if os.path.isdir(root):
                self._watch_tree(root)
            else:  # a file, or a root not there yet: its parent, for its one name
                parent = os.path.dirname(root) if os.path.lexists(root) else nearest_existing(root)
                rest = os.path.relpath(root, parent).split(os.sep)[0]
                wd = self._watch(parent)
                if wd is not None:
                    self._names.setdefault(wd, (parent, set()))[1].add(rest)

    def _watch_tree(self, top: str) -> None:
        stack = [top]
        while stack:
            folder = stack.pop()
            wd = self._watch(folder)
            if wd is None:
                continue
            self._recursive[wd] = folder
            try:
                with os.scandir(folder) as entries:
                    for entry in entries:
                        if entry.is_dir(follow_symlinks=False) and not is_ignored_dir(entry.name):
                            stack.append(entry.path)
            except OSError:
                continue  # vanished meanwhile: its deletion is an event of the parent

    def _watch(self, folder: str) -> int | None:
        wd = int(self._add(self._fd, os.fsencode(folder), _MASK))
        if wd >= 0:
            return wd
        error = ctypes.get_errno()
        if error in (2, 20):  # ENOENT, ENOTDIR: gone between the listing and the watch
            return None
        self._broken = f"cannot watch {folder}: {os.strerror(error)}"
        log.warning("change_journal_unavailable", reason=self._broken)
        return None

    def _drain(self) -> None:
        replan = False
        while True:
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                break
            offset = 0
            while offset < len(data):
                wd, mask, _cookie, size = _EVENT.unpack_from(data, offset)
                raw = data[offset + _EVENT.size : offset + _EVENT.size + size]
                offset += _EVENT.size + size
                name = os.fsdecode(raw.rstrip(b"\0"))
                if mask & _IN_Q_OVERFLOW:
                    # Events were lost: count it as a change (the next search scans everything)
                    # and watch again, so folders made meanwhile are watched from now on.
                    log.info("change_journal_overflow")
                    self._count += 1
                    replan = True
                    continue
                if mask & _IN_IGNORED:
                    self._recursive.pop(wd, None)
                    self._names.pop(wd, None)
                    continue
                ours = wd not in self._names or not name or name in self._names[wd][1]
                if not ours and wd not in self._recursive:
                    continue  # another file beside a file root: not ours
                if name and mask & _IN_ISDIR and is_ignored_dir(name) and wd in self._recursive:
                    continue  # inside an ignored folder's parent: the scan skips it too
                self._count += 1
                if mask & _IN_ISDIR and mask & (_IN_CREATE | _IN_MOVED_TO):
                    replan = True
                if mask & (_IN_DELETE_SELF | _IN_MOVE_SELF):
                    replan = True  # a root may have come back elsewhere: watch it again
        if replan:
            self._plan()
