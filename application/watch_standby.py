"""Application: a second watcher of an index stands by while another live process holds its lease.

Two processes watching the same index (`watch` twice, the daemon beside a `watch`) both see
every change. Each ran its own sync, and on SQLite (no sync lock across processes) both
detected the change before either indexed it: every change was logged twice and its file
indexed twice. So only the lease holder syncs on what its watcher sees; the other leaves the
changes to it and keeps trying to take the lease over. Once the holder is gone (stopped, or
killed: the kernel drops its lock), the standby holds the lease and syncs, which scans every
file, so a change the holder saw but did not index before it died is not lost.
"""

from __future__ import annotations

from typing import Final

from memlane.application.ports.clock import Clock
from memlane.application.ports.watch_lease import WatchLease

# How often a standby looks whether the holder is gone: the longest a change can wait for the
# sync after its holder died (each look is one shared-lock probe of the lease file).
TAKEOVER_EVERY_S: Final = 1.0


class LeaseStandby:
    """The lease of a watching process that did not get it when it started watching."""

    def __init__(
        self, lease: WatchLease, scope: str, clock: Clock, every: float = TAKEOVER_EVERY_S
    ) -> None:
        self._lease = lease
        self._scope = scope
        self._clock = clock
        self._every = every
        self._next = clock.monotonic() + every

    def covered(self) -> bool:
        """Whether a live holder watches this very index (same workspace, store, sources): the
        changes are its to sync. A holder of another scope syncs another index."""
        holder = self._lease.holder()
        return holder is not None and holder.scope == self._scope

    def wait(self) -> float:
        """Seconds until the next look."""
        return max(0.0, self._next - self._clock.monotonic())

    def take_over(self, *, now: bool = False) -> bool:
        """Take the lease when its holder is gone; True once held. Looks at most every
        `every` seconds unless `now` (a change just came)."""
        moment = self._clock.monotonic()
        if not now and moment < self._next:
            return False
        self._next = moment + self._every
        if self.covered():
            return False  # alive: trying the lock would wait out its retries for nothing
        return self._lease.acquire(self._scope)
