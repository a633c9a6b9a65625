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

Symlinks in a folder root are followed as the scan follows them: the folder of each hop of a
link's chain and of its target is watched for that one name, so an edit of `other/x.md` counts
for `memory/x.md -> ../other/x.md`. A linked folder's content is watched as a root of its own
(`FileSource.watch_roots` names every folder link the scan followed); a folder link to a
folder outside every root was refused by that scan when the journal started, so it is left
alone, but one made (or retargeted) later may be followed by the next scan and cannot be
watched from here: while such a link exists, `seen()` returns None.
"""

# ruff: noqa: PTH112, PTH114, PTH118, PTH120, PTH206
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

from memlane.adapters.sources._paths import IGNORED_DIRS, is_ignored_dir, is_within_any
from memlane.adapters.sources._watch_plan import is_followed, link_hops, nearest_existing

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
_IN_NAMING = _IN_CREATE | _IN_DELETE | _IN_MOVED_FROM | _IN_MOVED_TO  # a name appears or goes
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

    def __init__(self, roots: Sequence[str], suffixes: Sequence[str] = (".md", ".jsonl")) -> None:
        self._roots = list(roots)
        self._suffixes = tuple(suffix.lower() for suffix in suffixes)
        self._lock = threading.Lock()
        self._count = 0
        self._broken: str | None = None
        self._recursive: dict[int, str] = {}  # wd -> folder under a folder root
        self._names: dict[int, tuple[str, set[str]]] = {}  # wd -> (parent, names that count)
        self._folders: list[str] = []  # the folder roots, as last planned
        self._links: set[str] = set()  # followed links and the links they lead to
        self._targets: set[str] = set()  # where the followed links end
        self._starting = True  # the first plan: the roots came from a scan of this very tree
        self._refused: dict[str, str] = {}  # at start: link -> folder no root covers
        self._unwatched: set[str] = set()  # folder links made since, to a folder no root covers
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
            if self._broken is not None or self._unwatched:
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
        self._folders = [r for r in self._roots if os.path.isdir(r) and not os.path.islink(r)]
        self._links = set()
        self._targets = set()
        self._unwatched = set()
        for root in self._roots:
            if root in self._folders:
                self._watch_tree(root)
            elif os.path.islink(root):  # a root given as its link: its own folder, for its
                self._watch_name(root)  # name (no root's walk covers it), then where it leads
                self._follow_link(root)
            else:  # a file, or a root not there yet: its parent, for its one name
                self._watch_name(root)
        self._starting = False

    def _watch_name(self, path: str) -> None:
        """Watch the folder of `path` (or, while that is missing, its nearest existing ancestor)
        for the one name leading to `path`: other names there do not count."""
        parent = os.path.dirname(path) if os.path.lexists(path) else nearest_existing(path)
        rest = os.path.relpath(path, parent).split(os.sep)[0]
        wd = self._watch(parent)
        if wd is not None:
            self._names.setdefault(wd, (parent, set()))[1].add(rest)

    def _follow_link(self, link: str) -> None:
        """Watch where a link met in a folder root leads, as the scan follows it."""
        hops = link_hops(link)
        if not hops or not is_followed(link, hops[-1], self._suffixes, IGNORED_DIRS):
            return
        self._links.update((link, *hops[:-1]))
        self._targets.add(hops[-1])
        for hop in hops:
            self._watch_name(hop)
        target = os.path.realpath(link)
        if os.path.isdir(target) and not is_within_any(target, self._folders):
            self._outside_every_root(link, target)

    def _outside_every_root(self, link: str, target: str) -> None:
        """A folder link whose content no root's watch covers: there at the start, the scan the
        roots came from refused it (else they would name its folder); made later, the next scan
        may follow it, and the journal cannot vouch for what it does not watch."""
        if self._starting:
            self._refused[link] = target
        elif self._refused.get(link) != target:
            if link not in self._unwatched:
                log.warning("change_journal_link_unwatched", link=link, target=target)
            self._unwatched.add(link)

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
                        if entry.is_symlink():
                            self._follow_link(entry.path)
                        elif entry.is_dir(follow_symlinks=False) and not is_ignored_dir(entry.name):
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
                if name and mask & _IN_NAMING and not mask & _IN_ISDIR:
                    replan = replan or self._moves_a_link(wd, name, mask)
        if replan:
            self._plan()

    def _moves_a_link(self, wd: int, name: str, mask: int) -> bool:
        """Whether the entry `name` that appeared or went under watch `wd` changes where a
        link leads: a followed link (or one it leads to), or a new link in a folder root or at
        a link's target. A note saved whole (renamed over its target) leads nowhere new."""
        folder = self._recursive.get(wd) or self._names.get(wd, ("", set()))[0]
        path = os.path.join(folder, name)
        if path in self._links:
            return True
        if not mask & (_IN_CREATE | _IN_MOVED_TO):
            return False
        return (wd in self._recursive or path in self._targets) and os.path.islink(path)
