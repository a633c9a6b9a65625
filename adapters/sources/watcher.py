"""Adapter: ChangeWatcher on watchdog that never descends into ignored folders."""

# ruff: noqa: PTH113, PTH114, PTH120
# (str paths with os.scandir keep a 10k-file scan stat-bound; pathlib objects would double it)

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Final, Literal, TypeAlias

import structlog
from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
    FileSystemMovedEvent,
)
from watchdog.observers.api import BaseObserver, ObservedWatch
from watchdog.observers.polling import PollingObserverVFS

from memlane.adapters.sources._inotify_observer import native_observer
from memlane.adapters.sources._paths import IGNORED_DIRS, is_ignored_dir
from memlane.adapters.sources._watch_plan import (
    WatchPlan,
    has_relevant_name,
    make_plan,
    relevant_files,
)

Mode: TypeAlias = Literal["native", "polling"]

_log = structlog.get_logger(__name__)

# After a failed re-plan (a folder vanished mid-walk, a kernel hiccup), wait this long before
# trying again, so a persistent failure cannot spin the delivery thread.
_REPLAN_RETRY_SECONDS = 1.0

_EVENT_TYPES: Final[list[type[FileSystemEvent]]] = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    FileClosedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
]


class _Handler(FileSystemEventHandler):
    def __init__(self, sink: Callable[[FileSystemEvent], None]) -> None:
        super().__init__()
        self._sink = sink

    def on_any_event(self, event: FileSystemEvent) -> None:
        self._sink(event)


class WatchdogChangeWatcher:
    """Watches note folders and transcript folders with watchdog, reporting changes at once.

    Why not one recursive watch per root: watchdog's inotify backend adds a kernel watch for
    every folder below a recursive watch, `node_modules` and `.venv` included, and cannot be
    told to skip any. So the watcher walks each root itself (pruning ignored and hidden
    folders, never entering symlinked folders) and schedules a recursive watch only on
    folders whose whole subtree is clean, and a non-recursive watch on folders that contain an
    ignored folder. Each scheduled watch costs one emitter thread and the observer shares one
    inotify descriptor, so resources stay bounded by the notes tree, not by what sits next to
    it. Above `max_watches` scheduled watches or `max_watched_dirs` folders, or when the
    kernel refuses a watch (watch limit, descriptors), it falls back to a polling observer that
    walks the same pruned tree; `fallback_reason` says why.

    Roots that are files (e.g. `MEMORY.md`) are observed through a non-recursive watch on their
    folder; missing roots through their nearest existing ancestor until they appear. Folder
    creations, deletions and moves re-plan the watches before the batch is delivered, and
    notes found in newly watched folders are added to that batch (they may predate the watch).

    Symlinks in a root are followed as the scan follows them, since an edit behind a link is
    an edit of a note: each hop of a link's chain and its target are observed through a
    non-recursive watch on their folder (so `memory/x.md -> ../other/x.md` is seen when
    `other/x.md` changes); a linked folder's content is observed as a root of its own, which
    `FileSource.watch_roots` names for every folder link the scan followed. A link created,
    replaced or removed re-plans the watches and is delivered as a change (its own path: what
    it showed may have vanished or appeared, like a folder's content). A folder link made later
    to a folder outside every root is not watched inside (the change journal then vouches for
    nothing, so searches scan).

    Batches are what the `ChangeWatcher` contract says: real absolute paths of relevant files
    (`suffixes`), plus folders that were deleted or moved. The watcher does not debounce: one
    delivery thread hands over whatever arrived since its previous call, so a burst that comes
    while the consumer is busy arrives as one batch, and the consumer decides how long to wait.
    """

    def __init__(
        self,
        *,
        ignored_dirs: Iterable[str] = IGNORED_DIRS,
        suffixes: Sequence[str] = (".md", ".jsonl"),
        max_watches: int = 256,
        max_watched_dirs: int = 50_000,
        polling_interval: float = 1.0,
        force_polling: bool = False,
    ) -> None:
        self._ignored = frozenset(name.lower() for name in ignored_dirs)
        self._suffixes = tuple(s.lower() for s in suffixes)
        self._max_watches = max_watches
        self._max_watched_dirs = max_watched_dirs
        self._polling_interval = polling_interval
        self._mode: Mode = "polling" if force_polling else "native"
        self._fallback_reason: str | None = "forced" if force_polling else None

        self._roots: list[str] = []
        self._on_change: Callable[[Sequence[str]], None] | None = None
        self._observer: BaseObserver | None = None
        self._scheduled: dict[str, tuple[bool, ObservedWatch]] = {}
        self._plan = WatchPlan()
        self._handler = _Handler(self._on_event)

        self._lifecycle = threading.Lock()
        self._cond = threading.Condition()
        self._pending: set[str] = set()
        self._structural = False
        self._stopping = False
        self._thread: threading.Thread | None = None

    # ----------------------------------------------------------------------------- public

    @property
    def mode(self) -> Mode:
        """ "native" (inotify on Linux) or "polling" after a fallback."""
        return self._mode

    @property
    def fallback_reason(self) -> str | None:
        return self._fallback_reason

    @property
    def watch_count(self) -> int:
        """Watches scheduled with watchdog right now (one emitter thread each)."""
        return len(self._scheduled)

    @property
    def watched_dir_count(self) -> int:
        """Folders observed right now (inotify adds one kernel watch per folder)."""
        return len(self._plan.covered)

    def start(self, roots: Sequence[str], on_change: Callable[[Sequence[str]], None]) -> None:
        with self._lifecycle:
            if self._thread is not None:
                raise RuntimeError("watcher already started")
            self._roots = [os.path.realpath(r) for r in roots]
            self._on_change = on_change
            self._stopping = False
            self._apply(self._make_plan())
            self._thread = threading.Thread(
                target=self._deliver_loop, name="memlane-watch-debounce", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        with self._lifecycle:
            self._thread = None
            self._stop_observer()

    # ----------------------------------------------------------------------------- planning

    def _make_plan(self) -> WatchPlan:
        return make_plan(
            self._roots,
            suffixes=self._suffixes,
            ignored=self._ignored,
            polling=self._mode == "polling",
        )

    def _apply(self, plan: WatchPlan) -> None:
        """Bring scheduled watches in line with `plan`, falling back to polling if needed."""
        if self._mode == "native":
            reason = self._over_budget(plan)
            if reason is None:
                reason = self._schedule(plan)
            if reason is None:
                self._plan = plan
                return
            self._switch_to_polling(reason)
            plan = self._make_plan()
        if self._schedule(plan) is not None:  # polling has no kernel limits; keep what worked
            _log.warning("watch_schedule_failed", mode=self._mode)
        self._plan = plan

    def _over_budget(self, plan: WatchPlan) -> str | None:
        if len(plan.watches) > self._max_watches:
            return f"{len(plan.watches)} watches needed, more than max_watches={self._max_watches}"
        if len(plan.covered) > self._max_watched_dirs:
            return (
                f"{len(plan.covered)} folders to watch, more than "
                f"max_watched_dirs={self._max_watched_dirs}"
            )
        return None

    def _schedule(self, plan: WatchPlan) -> str | None:
        """Diff scheduled watches against the plan; return an error that calls for a fallback."""
        observer = self._ensure_observer()
        for path, (recursive, watch) in list(self._scheduled.items()):
            if plan.watches.get(path) != recursive:
                del self._scheduled[path]
                observer.unschedule(watch)
        for path, recursive in sorted(plan.watches.items()):
            if path in self._scheduled:
                continue
            try:
                watch = observer.schedule(
                    self._handler, path, recursive=recursive, event_filter=_EVENT_TYPES
                )
            except FileNotFoundError:
                continue  # vanished since planning; its parent's events will re-plan
            except OSError as exc:
                return f"the kernel refused a watch on {path}: {exc.strerror or exc}"
            self._scheduled[path] = (recursive, watch)
        return None

    def _ensure_observer(self) -> BaseObserver:
        if self._observer is None:
            if self._mode == "native":
                observer: BaseObserver = native_observer()
            else:
                # lstat: a link is listed as a link, so its making or removal is seen and the
                # snapshot never enters it (what it leads to is watched by the plan).
                observer = PollingObserverVFS(
                    os.lstat, self._pruned_scandir, polling_interval=self._polling_interval
                )
            observer.start()
            self._observer = observer
        return self._observer

    def _switch_to_polling(self, reason: str) -> None:
        _log.warning("watcher_fell_back_to_polling", reason=reason)
        self._stop_observer()
        self._mode = "polling"
        self._fallback_reason = reason

    def _stop_observer(self) -> None:
        observer, self._observer = self._observer, None
        self._scheduled.clear()
        if observer is not None:
            observer.stop()
            observer.join()

    def _pruned_scandir(self, path: str | None) -> Iterator[os.DirEntry[str]]:
        """os.scandir for the polling snapshot, minus ignored folders (links are kept)."""
        with os.scandir(path) as it:
            kept = [e for e in it if not self._skip_in_snapshot(e)]
        return iter(kept)

    def _skip_in_snapshot(self, entry: os.DirEntry[str]) -> bool:
        try:
            if not entry.is_dir(follow_symlinks=False):
                return False
            return is_ignored_dir(entry.name, self._ignored)
        except OSError:
            return True

    # ----------------------------------------------------------------------------- events

    def _on_event(self, event: FileSystemEvent) -> None:
        paths = [os.fsdecode(event.src_path)]
        if isinstance(event, FileSystemMovedEvent) and event.dest_path:
            paths.append(os.fsdecode(event.dest_path))
        relevant: list[str] = []
        structural = event.is_directory
        for path in paths:
            if event.is_directory:
                if not isinstance(event, DirCreatedEvent) and self._held(path, is_dir=True):
                    relevant.append(path)
                continue
            link_changed = self._link_changed(event, path)
            structural = structural or link_changed  # where a link leads must be watched anew
            if (
                link_changed
                or path in self._plan.file_roots
                or path in self._plan.link_targets  # a linked note was edited
                or (has_relevant_name(path, self._suffixes) and self._held(path, is_dir=False))
            ):
                relevant.append(path)
        if not relevant and not structural:
            return
        with self._cond:
            self._pending.update(relevant)
            self._structural = self._structural or structural
            self._cond.notify_all()

    def _link_changed(self, event: FileSystemEvent, path: str) -> bool:
        """Whether `event` made, replaced or removed a followed link (or one it leads to), or
        made a link in a root or at a link's target. A note saved whole (renamed over its
        target) leads nowhere new: no re-plan."""
        if isinstance(event, (FileModifiedEvent, FileClosedEvent)):
            return False  # content changed, not where anything leads
        if path in self._plan.links:
            return True
        if isinstance(event, FileDeletedEvent):
            return False
        at_target = path in self._plan.link_targets
        return (at_target or self._held(path, is_dir=False)) and os.path.islink(path)

    def _held(self, path: str, *, is_dir: bool) -> bool:
        return self._plan.holds(path, is_dir=is_dir, ignored=self._ignored)

    def _deliver_loop(self) -> None:
        while True:
            with self._cond:
                while not self._stopping and not (self._pending or self._structural):
                    self._cond.wait()
                if self._stopping:
                    return
                batch, self._pending = self._pending, set()
                structural, self._structural = self._structural, False
            if structural:
                try:
                    batch.update(self._replan())
                except Exception:
                    # Keep watching with the previous plan; try again a little later.
                    _log.exception("watch_replan_failed")
                    with self._cond:
                        self._structural = True
                        self._cond.wait(_REPLAN_RETRY_SECONDS)
            if batch:
                self._deliver(sorted(batch))

    def _replan(self) -> set[str]:
        """Re-plan after folder changes; return relevant files in newly covered folders, and the
        links made or removed since the last plan.

        A link's removal is known as a change only while the plan still lists the link: a
        re-plan that walked the tree after the link went (one started by an earlier event)
        drops it from the plan, and the removal's own event, checked against that plan, then
        looked like a file of no interest. The plans' difference says it whatever the order."""
        with self._lifecycle:
            if self._stopping or self._on_change is None:
                return set()
            old = self._plan
            self._apply(self._make_plan())
            new = self._plan
        found: set[str] = set(old.links ^ new.links)
        for folder in new.covered - old.covered:
            found.update(relevant_files(folder, self._suffixes))
        for root in new.file_roots:
            if os.path.dirname(root) not in old.watches and os.path.isfile(root):
                found.add(root)
        return found

    def _deliver(self, batch: list[str]) -> None:
        callback = self._on_change
        if callback is None:
            return
        try:
            callback(batch)
        except Exception:
            # The callback belongs to the caller; a failure there must not end the watch.
            _log.exception("watch_callback_failed", paths=len(batch))
