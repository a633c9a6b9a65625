"""Adapter helper: which folders the watcher observes, and where a symlink leads."""

# ruff: noqa: PTH110, PTH112, PTH115, PTH118, PTH119, PTH120
# (str paths with os.scandir keep a 10k-file walk stat-bound; pathlib objects would double it)

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from memlane.adapters.sources._paths import has_suffix, is_ignored_dir

# The kernel gives up on a chain of links after 40 hops (ELOOP); so do we.
_MAX_HOPS = 40


@dataclass(slots=True)
class WatchPlan:
    """Which directories to watch (path -> recursive) and every directory they cover."""

    watches: dict[str, bool] = field(default_factory=dict)
    covered: set[str] = field(default_factory=set)
    dir_roots: list[str] = field(default_factory=list)
    file_roots: set[str] = field(default_factory=set)
    links: set[str] = field(default_factory=set)  # followed links and the links they lead to
    link_targets: set[str] = field(default_factory=set)  # where the followed links end

    def add(self, path: str, *, recursive: bool) -> None:
        self.watches[path] = self.watches.get(path, False) or recursive


@dataclass(slots=True)
class WalkedTree:
    """The non-ignored folders under a root (walk order, children), those with an ignored
    descendant (`dirty`), and the symlinks met in them (not entered)."""

    order: list[str] = field(default_factory=list)
    children: dict[str, list[str]] = field(default_factory=dict)
    dirty: set[str] = field(default_factory=set)
    links: list[str] = field(default_factory=list)


def walk_tree(root: str, ignored: frozenset[str]) -> WalkedTree:
    """Walk the non-ignored folders under `root` without entering symlinks (listed instead)."""
    tree = WalkedTree()
    order, children, dirty = tree.order, tree.children, tree.dirty
    parent: dict[str, str] = {}
    stack = [root]
    while stack:
        current = stack.pop()
        order.append(current)
        try:
            with os.scandir(current) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_symlink():
                    tree.links.append(entry.path)
                    continue
                if not entry.is_dir(follow_symlinks=False):
                    continue
            except OSError:
                continue
            if is_ignored_dir(entry.name, ignored):
                dirty.add(current)
                continue
            parent[entry.path] = current
            children.setdefault(current, []).append(entry.path)
            stack.append(entry.path)
    for folder in reversed(order):
        if folder in dirty and folder in parent:
            dirty.add(parent[folder])
    return tree


def link_hops(link: str) -> list[str]:
    """Where the symlink `link` leads, hop by hop: each further link of a chain, then the target
    (which may be missing), each in its real folder. Changing any of them (a link retargeted or
    removed, the target edited, replaced or created) changes what `link` shows, so a watcher
    watches each one's folder for its name. Empty when `link` is no symlink."""
    hops: list[str] = []
    current = link
    while len(hops) < _MAX_HOPS:
        try:
            joined = os.path.join(os.path.dirname(current), os.readlink(current))
        except OSError:
            break  # not a link: the chain ends at `current`
        name = os.path.basename(joined)
        if name in ("", ".", ".."):  # a folder named by its path alone: resolve it whole
            hops.append(os.path.realpath(joined))
            break
        current = os.path.join(os.path.realpath(os.path.dirname(joined)), name)
        if current in hops:
            break  # a loop: nothing more to watch
        hops.append(current)
    return hops


def is_followed(link: str, target: str, suffixes: Sequence[str], ignored: frozenset[str]) -> bool:
    """Whether the scan follows `link` to `target` by their kind and names: a folder whose link
    is not named as an ignored one, a note (link and target named with a watched suffix), or a
    target not there yet that may become either."""
    name = os.path.basename(link)
    as_note = any(has_suffix(name, suffix) for suffix in suffixes)
    if os.path.isdir(target):
        return not is_ignored_dir(name, ignored)
    if os.path.exists(target):
        return as_note and any(has_suffix(os.path.basename(target), s) for s in suffixes)
    return as_note or not is_ignored_dir(name, ignored)


def nearest_existing(path: str) -> str:
    """The closest existing folder at or above `path`: missing roots are watched through it."""
    while not os.path.isdir(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path


def drop_covered_by_recursive(watches: dict[str, bool]) -> None:
    """Remove watches that a recursive watch on an ancestor already covers."""
    for path in list(watches):
        child, ancestor = path, os.path.dirname(path)
        while ancestor != child:
            if watches.get(ancestor):
                del watches[path]
                break
            child, ancestor = ancestor, os.path.dirname(ancestor)
