"""Port: the watch lease, how a process watching the files tells others the index is fresh.

A process that watches the sources (`watch`, `serve`, `mcp`) holds the lease while it watches
and says whether every change it saw is indexed. A process about to search without a watcher
of its own (the CLI) may then skip its scan of every file, which costs about a second per
50,000 notes on a slow file system. The lease ends with its holder however it ends: a killed
holder holds nothing, so a stale "fresh" is never read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class LeaseHolder:
    """What the live holder of a lease last said."""

    pid: int
    scope: str  # what it watches and indexes into (workspace, store, sources): must match
    fresh: bool  # every change it saw is indexed (nothing held back, nothing pending)


class WatchLease(Protocol):
    """One index's lease: held by at most one watching process at a time."""

    def acquire(self, scope: str) -> bool:
        """Hold the lease (not fresh yet) unless another live process does; True if held."""
        ...

    def set_fresh(self, fresh: bool) -> None:
        """Say whether every change seen is indexed (a no-op when the lease is not held)."""
        ...

    def release(self) -> None:
        """Give the lease up (a no-op when it is not held)."""
        ...

    def holder(self) -> LeaseHolder | None:
        """The live holder's last word, None when no live process holds the lease."""
        ...

    def answer(self, fresh: Callable[[], bool]) -> None:
        """While held, answer each reader's `confirm` with `fresh()` (a no-op when not held).

        `fresh()` is called after the question arrived and must say whether every change that
        finished before it was called is indexed (a change journal can: its count covers every
        change whose system call returned before it is read)."""
        ...

    def confirm(self) -> bool:
        """Ask the live holder whether every change that finished before this call is indexed;
        False when it says no or does not answer. The holder's last word (`holder().fresh`) may
        predate a change that just finished: a scan is skipped only on this answer."""
        ...
