"""Adapter detail: watchdog's inotify observer, made to release its descriptors on every stop.

watchdog 7.1's `InotifyFD.close()` leaves the closing of the inotify descriptor and its wake-up
pipe to the reader thread when that thread is "reading", and a new instance counts as reading
from birth. A stop that comes before the reader thread first ran (start then stop at once, on a
loaded machine) therefore leaks three descriptors and an inotify instance: measured 128 leaks in
300 start/stop cycles at load 9, until the per-user instance limit was hit. Here the reader's end
and `close()` each check the other under the instance's lock, so whichever comes last closes.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch


def native_observer() -> BaseObserver:
    """The platform's native observer; on Linux, one whose stop always closes its descriptors."""
    if not sys.platform.startswith("linux"):
        return Observer()
    return _observer_class()()


@functools.cache  # the classes once per process
def _observer_class() -> Callable[[], BaseObserver]:
    from watchdog.observers.inotify import InotifyObserver  # Linux only: it binds libc inotify
    from watchdog.observers.inotify_c import InotifyFD

    class ClosingInotifyFD(InotifyFD):
        def __init__(self) -> None:
            super().__init__()
            self._ended = False
            self._released = False

        def _close_resources(self) -> None:  # always called under self._lock
            if not self._released:  # once: a second close could hit a reused descriptor
                self._released = True
                super()._close_resources()

        def run(self) -> None:
            try:
                super().run()
            finally:
                with self._lock:
                    self._ended = True
                    if self._closed:  # closed before this thread read: nobody else closes
                        self._close_resources()

        def close(self) -> None:
            super().close()
            with self._lock:
                if self._ended:  # the reader is gone: it will not close them now
                    self._close_resources()

    class ClosingInotifyObserver(InotifyObserver):
        def schedule(
            self,
            event_handler: FileSystemEventHandler,
            path: str | Path,
            *,
            recursive: bool = False,
            event_filter: list[type[FileSystemEvent]] | None = None,
            follow_symlink: bool = False,
        ) -> ObservedWatch:
            with self._lock:  # an RLock: the base schedule takes it again
                if self._inotify_fd is None:  # the base would make a plain InotifyFD here
                    inotify_fd = ClosingInotifyFD()
                    inotify_fd.start()
                    self._inotify_fd = inotify_fd
                    self._emitter_kwargs["inotify_fd"] = inotify_fd
                return super().schedule(
                    event_handler,
                    path,
                    recursive=recursive,
                    event_filter=event_filter,
                    follow_symlink=follow_symlink,
                )

    return ClosingInotifyObserver
