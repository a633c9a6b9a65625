"""Adapter helper: which folders the watcher observes, where a symlink leads, and which paths
and files of a planned tree are the watcher's business."""

# ruff: noqa: PTH110, PTH112, PTH114, PTH115, PTH118, PTH119, PTH120, PTH206
# (str paths with os.scandir keep a 10k-file walk stat-bound; pathlib objects would double it)

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from memlane.adapters.sources._paths import has_suffix, is_ignored_dir, is_within

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

    def holds(self, path: str, *, is_dir: bool, ignored: frozenset[str]) -> bool:
        """Whether `path` lies in a root folder, outside ignored folders (a root itself is held
        as a folder, not as a file)."""
        for root in self.dir_roots:
            if path == root:
                return is_dir
            if is_within(path, root):
                segments = os.path.relpath(path, root).split(os.sep)
                folders = segments if is_dir else segments[:-1]
                if not any(is_ignored_dir(f, ignored) for f in folders):
                    return True
        return False


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
        entries = _listed(current)
        if entries is None:
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


def has_relevant_name(path: str, suffixes: Sequence[str]) -> bool:
    """Whether the file's name ends with one of the watched suffixes (given lower-case)."""
    name = os.path.basename(path)
    return any(has_suffix(name, suffix) for suffix in suffixes)


def relevant_files(folder: str, suffixes: Sequence[str]) -> Iterator[str]:
    """The regular files of `folder` (links followed) with a watched suffix; none when it
    cannot be read (it vanished, or lost its permissions, since it was planned)."""
    for entry in _listed(folder) or ():
        try:
            st = entry.stat()
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and has_relevant_name(entry.name, suffixes):
            yield entry.path


def _listed(folder: str) -> list[os.DirEntry[str]] | None:
    """The entries of `folder`, None when it cannot be read (gone, or no permission)."""
    try:
        with os.scandir(folder) as it:
            return list(it)
    except OSError:
        return None


def make_plan(
    roots: Sequence[str], *, suffixes: Sequence[str], ignored: frozenset[str], polling: bool
) -> WatchPlan:
    """The folders to watch for `roots` (folders, files, links to either): a root folder's
    tree, recursively where no ignored folder lies below, else folder by folder around the
    ignored ones (polling prunes them itself: one recursive watch); a file root's folder; the
    folder of each hop of a followed link."""
    plan = WatchPlan()
    for root in roots:
        if os.path.islink(root):  # a root given as its link: where it leads may change
            plan.add(os.path.dirname(root), recursive=False)  # no root's walk covers it
            _plan_link(plan, root, suffixes, ignored)
            continue
        is_dir = os.path.isdir(root)
        is_file = os.path.lexists(root) and not is_dir
        if is_file or (not is_dir and has_relevant_name(root, suffixes)):
            plan.file_roots.add(root)
            plan.add(nearest_existing(os.path.dirname(root)), recursive=False)
        elif not is_dir:
            plan.dir_roots.append(root)
            plan.add(nearest_existing(os.path.dirname(root)), recursive=False)
        else:
            plan.dir_roots.append(root)
            _plan_tree(plan, root, suffixes, ignored, polling=polling)
    drop_covered_by_recursive(plan.watches)
    return plan


def _plan_tree(
    plan: WatchPlan,
    root: str,
    suffixes: Sequence[str],
    ignored: frozenset[str],
    *,
    polling: bool,
) -> None:
    tree = walk_tree(root, ignored)
    plan.covered.update(tree.order)
    for link in tree.links:
        _plan_link(plan, link, suffixes, ignored)
    if polling:
        plan.add(root, recursive=True)  # the polling snapshot prunes ignored folders itself
        return
    queue = [root]
    while queue:
        current = queue.pop()
        if current in tree.dirty:
            plan.add(current, recursive=False)
            queue.extend(tree.children.get(current, ()))
        else:
            plan.add(current, recursive=True)


def _plan_link(
    plan: WatchPlan, link: str, suffixes: Sequence[str], ignored: frozenset[str]
) -> None:
    """Watch the folder of each hop of a followed link's chain (its target's included)."""
    hops = link_hops(link)
    if not hops or not is_followed(link, hops[-1], suffixes, ignored):
        return
    plan.links.update((link, *hops[:-1]))
    plan.link_targets.add(hops[-1])
    for hop in hops:
        plan.add(nearest_existing(os.path.dirname(hop)), recursive=False)
