"""Application: the pure timing of background syncs (`SyncPlan`) and of their retries after a
failure (`RetryBackoff`). Times come from the caller (monotonic seconds), so both are tested
without threads or sleeps; `scheduler.BackgroundSyncer` runs what they make due.
"""

from __future__ import annotations

from dataclasses import dataclass

from memlane.application.sync_trigger import SyncTrigger

# Under a constant stream of requests a sync still runs this many debounce windows after the
# first one (and at least a second after it), so a busy folder cannot starve the index.
_MAX_DELAY_WINDOWS = 5

# Past this many doublings every delay is the cap anyway; 2.0 ** attempt overflows a float after
# ~1,000 attempts, which a store down for days reaches.
_MAX_DOUBLINGS = 32


@dataclass(frozen=True, slots=True)
class RetryBackoff:
    """How long a failed background sync waits before it runs again: `first` seconds after the
    first failure in a row, twice as long after each further one, never more than `cap`.

    5 s first: a locked database or a restarting server is usually back by then. Doubling: a
    long outage costs 6 warnings to reach the cap, then one every 5 minutes. The 5-minute cap
    bounds how long the index stays stale after the store is back (a search syncs at once).
    """

    first: float = 5.0
    cap: float = 300.0

    def delay(self, attempt: int) -> float:
        """The wait after the `attempt`-th failure in a row (1: the first)."""
        doublings = min(max(attempt - 1, 0), _MAX_DOUBLINGS)
        return min(self.cap, self.first * 2.0**doublings)


SYNC_RETRY = RetryBackoff()


class SyncPlan:
    """Pure timing of background syncs: debounced requests plus an optional interval.

    A request is due `debounce` seconds after the latest request, but at most
    `max(1, 5 * debounce)` seconds after the first unanswered one. With `interval > 0`, a sync
    also falls due `interval` seconds after the last sync. A failed sync's `retry` falls due at
    the time given. Times come from the caller (monotonic seconds), so the plan is tested
    without threads or sleeps.
    """

    def __init__(self, *, debounce: float, interval: float, now: float) -> None:
        self._debounce = debounce
        self._max_delay = max(1.0, _MAX_DELAY_WINDOWS * debounce)
        self._interval = interval
        self._trigger: SyncTrigger | None = None
        self._first = self._latest = 0.0
        self._last_sync = now
        self._retry: SyncTrigger | None = None  # a failed sync to run again at `_retry_at`
        self._retry_at = 0.0

    @property
    def pending(self) -> SyncTrigger | None:
        """The trigger of the unanswered request, None when nothing was asked."""
        return self._trigger

    def request(self, trigger: SyncTrigger, now: float) -> None:
        """Record a request; the latest trigger names the coming sync."""
        if self._trigger is None:
            self._first = now
        self._trigger = trigger
        self._latest = now

    def due(self, now: float) -> SyncTrigger | None:
        """Return the trigger of the sync to run now, or None when nothing is due."""
        if self._trigger is not None and now >= self._request_due():
            return self._trigger
        if self._retry is not None and now >= self._retry_at:
            return self._retry
        if self._interval > 0 and now >= self._last_sync + self._interval:
            return SyncTrigger.INTERVAL
        return None

    def synced(self, now: float) -> None:
        """Note a sync starting now: it answers the requests so far and a scheduled retry; the
        interval restarts."""
        self._trigger = self._retry = None
        self._last_sync = now

    def retry(self, trigger: SyncTrigger, at: float) -> None:
        """Run a failed sync again at `at`, unless a request or the interval brings one first."""
        self._retry, self._retry_at = trigger, at

    def wait(self, now: float) -> float | None:
        """Seconds until something may fall due; None means only a request can change that."""
        deadlines = []
        if self._trigger is not None:
            deadlines.append(self._request_due())
        if self._retry is not None:
            deadlines.append(self._retry_at)
        if self._interval > 0:
            deadlines.append(self._last_sync + self._interval)
        return max(0.0, min(deadlines) - now) if deadlines else None

    def _request_due(self) -> float:
        return min(self._latest + self._debounce, self._first + self._max_delay)
