"""Adapter helper: which folders the watcher observes, found by walking the roots once."""

# ruff: noqa: PTH112, PTH120
# (str paths with os.scandir keep a 10k-file walk stat-bound; pathlib objects would double it)

from __future__ import annotations

import os
from dataclasses import dataclass, field

from memlane.adapters.sources._paths import is_ignored_dir


@dataclass(slots=True)
class WatchPlan:
    """Which directories to watch (path -> recursive) and every directory they cover."""

    watches: dict[str, bool] = field(default_factory=dict)
    covered: set[str] = field(default_factory=set)
    dir_roots: list[str] = field(default_factory=list)
    file_roots: set[str] = field(default_factory=set)

    def add(self, path: str, *, recursive: bool) -> None:
        self.watches[path] = self.watches.get(path, False) or recursive


def walk_tree(
    root: str, ignored: frozenset[str]
) -> tuple[list[str], dict[str, list[str]], set[str]]:
    """List the non-ignored folders under `root`; mark those with an ignored descendant."""
    order: list[str] = []
    parent: dict[str, str] = {}
    children: dict[str, list[str]] = {}
    dirty: set[str] = set()
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
                if entry.is_symlink() or not entry.is_dir(follow_symlinks=False):
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
    return order, children, dirty


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
