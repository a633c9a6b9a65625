"""Application: when syncs run by themselves (watcher, interval timer, searches, new sessions).

Every automatic sync goes through one debouncer here: the watcher reports changes as they
happen, searches and session starts ask for a sync, and `SyncPlan` turns that stream into as
few syncs as it can without leaving a change waiting longer than the debounce window.

The background syncer also runs the vector backfill, one committed batch at a time while no
sync is due: its syncs only commit keyword rows and leave missing vectors to these batches, so
a change is indexed within the debounce window even during a backfill of hours. A sync run
elsewhere that did not wait for its vectors (gRPC `Sync` with `wait_for_vectors` false) hands
them to the worker through `backfill`.

A background sync that fails (a store that is down, a database locked or a disk full for a
moment) is run again on its own after a growing delay (`RetryBackoff`), until one succeeds: no
change or search may ever come to ask again. A failure only the user can fix is not retried.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence

import structlog

from memlane.application.ports.clock import Clock
from memlane.application.ports.file_source import ChangeWatcher, FileSource
from memlane.application.ports.index_store import StoreCorrupt, caused_by
from memlane.application.ports.watch_lease import WatchLease
from memlane.application.reports import SyncReport
from memlane.application.sync import SyncService
from memlane.application.sync_failures import SyncVerdicts
from memlane.application.sync_plan import SYNC_RETRY, RetryBackoff, SyncPlan
from memlane.application.sync_trigger import SyncTrigger
from memlane.application.watch_standby import LeaseStandby
from memlane.domain.config import SyncSettings
from memlane.domain.errors import DomainError
from memlane.domain.sources import Source

log = structlog.get_logger()


def _needs_the_user(error: Exception) -> bool:
    """Whether running the sync again cannot help until the user acts: a configuration or
    workspace choice, a damaged database. (A mass deletion to confirm and a read-only store
    never get here: `run_unless_read_only` returns None for them and the syncer waits for the
    next change.)"""
    return isinstance(error, DomainError) or caused_by(error, StoreCorrupt)


class BackgroundSyncer:
    """A worker thread running the syncs `SyncPlan` schedules; optionally fed by a watcher."""

    def __init__(
        self,
        *,
        syncing: SyncService,
        clock: Clock,
        settings: SyncSettings,
        sources: Mapping[Source, FileSource],
        watcher: ChangeWatcher | None = None,
        lease: WatchLease | None = None,
        lease_scope: str = "",
        backoff: RetryBackoff = SYNC_RETRY,
        verdicts: SyncVerdicts | None = None,
    ) -> None:
        self._syncing = syncing
        self._verdicts = verdicts  # where a failed sync is recorded for `status` (None: logs only)
        self._clock = clock
        self._settings = settings
        self._sources = sources
        self._watcher = watcher
        self._plan = SyncPlan(
            debounce=settings.watch_debounce_ms / 1000,
            interval=settings.interval_minutes * 60,
            now=clock.monotonic(),
        )
        self._lock = threading.Lock()
        # start and stop run whole, one at a time: a server starts the worker from a thread
        # of its own, and a host closing meanwhile must not stop it half-started.
        self._lifecycle = threading.Lock()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._watching = False
        self._lease = lease
        self._lease_scope = lease_scope
        self._leased = False  # this process holds the lease (it watches)
        # Another live process holds it: changes are its to sync until it is gone.
        self._standby: LeaseStandby | None = None
        self._answer: Callable[[], bool] | None = None  # for readers, once the lease is held
        self._changes_seen = 0  # watcher reports so far: a sync is fresh if none came during it
        self._vectors_pending = True  # until a backfill batch finds nothing (more) to do
        self._backfills_asked = 0  # bumped by `backfill`: a step that found nothing before
        # the latest ask must not clear the flag that ask set
        self._refusal_told: str | None = None  # the mass-deletion refusal already logged
        self._backoff = backoff
        self._failures = 0  # background syncs failed in a row, each retried after a backoff
        self._before_scan: Callable[[], int | None] | None = None
        self._after_scan: Callable[[int | None, SyncReport | None], None] | None = None

    def on_scans(
        self,
        before: Callable[[], int | None],
        after: Callable[[int | None, SyncReport | None], None],
    ) -> None:
        """Call `before` as each background sync begins and `after` with its result and report
        (None: it failed), so a change journal knows what the sync's scan covered."""
        self._before_scan, self._after_scan = before, after

    @property
    def started(self) -> bool:
        """Whether the worker thread runs (requests before `start` only mark the index dirty)."""
        return self._thread is not None

    @property
    def pending(self) -> SyncTrigger | None:
        """The trigger of the requested sync that has not started yet, if any."""
        with self._lock:
            return self._plan.pending

    @property
    def vectors_pending(self) -> bool:
        """Whether the worker still embeds vectors between syncs (until a batch finds none)."""
        with self._lock:
            return self._vectors_pending

    def backfill(self) -> None:
        """Note that chunks may lack vectors (a sync that returned without waiting for them):
        the worker embeds them batch by batch whenever no sync is due, even when it was idle."""
        with self._lock:
            self._backfills_asked += 1
            self._vectors_pending = True
        self._wake.set()

    def request(self, trigger: SyncTrigger) -> None:
        """Mark the index dirty and, once started, schedule a debounced sync."""
        self._syncing.mark_dirty()
        if self._thread is None:
            return
        with self._lock:
            self._plan.request(trigger, self._clock.monotonic())
        self._wake.set()

    def start(self, *, watch: bool | None = None) -> None:
        """Start the worker and, if `watch` (default: the settings) and a watcher, the watcher;
        nothing once stopped."""
        with self._lifecycle:
            if self._thread is None and not self._stopping.is_set():
                self._start(watch)

    def _start(self, watch: bool | None) -> None:
        with self._lock:
            self._plan.synced(self._clock.monotonic())  # the interval counts from start
        self._thread = threading.Thread(target=self._loop, name="memlane-sync", daemon=True)
        self._thread.start()
        want_watch = self._settings.watch if watch is None else watch
        if want_watch and self._watcher is not None:
            roots = [root for source in self._sources.values() for root in source.watch_roots()]
            self._watcher.start(roots, self._on_change)
            self._watching = True
            if self._lease is not None:
                self._leased = self._lease.acquire(self._lease_scope)
                if not self._leased:
                    self._standby = LeaseStandby(self._lease, self._lease_scope, self._clock)
                    self._wake.set()  # the worker, idle already, looks for the holder's end
            # "Fresh" only after a scan made while the watcher was live. Without an index yet
            # no search trusts the lease, and the first index waits for a request as before
            # (a start-up sync would build it, and hold the sync lock over its vectors).
            if self._leased and self._syncing.has_index():
                self.request(SyncTrigger.WATCH)

    def answer_readers(self, fresh: Callable[[], bool]) -> None:
        """While this process holds the lease, answer other processes' `confirm` with
        `fresh()` (application/ports/watch_lease.py)."""
        with self._lock:
            self._answer = fresh
            if self._leased and self._lease is not None:
                self._lease.answer(fresh)

    def stop(self) -> None:
        """Stop the watcher and the worker; a sync in progress finishes first, a vector backfill
        step after its running provider call (VectorBackfill.step)."""
        self._stopping.set()  # first: the backfill asks between its provider calls
        with self._lifecycle:
            self._stop()

    def _stop(self) -> None:
        with self._lock:
            self._standby = None  # a stopping watcher takes nothing over
            if self._leased and self._lease is not None:
                self._leased = False
                self._lease.release()  # first: no reader may trust a watcher that is stopping
        if self._watching and self._watcher is not None:
            self._watcher.stop()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _on_change(self, paths: Sequence[str]) -> None:
        # The detector rescans every source by stat, which is cheap and also catches what a
        # watcher cannot map (moved folders); the paths are only logged.
        log.debug("watch_changed", paths=len(paths), sample=list(paths[:3]))
        with self._lock:  # one lock with the sync's verdict: a change is never overwritten
            self._changes_seen += 1
            if self._leased and self._lease is not None:
                self._lease.set_fresh(False)  # before the sync is even scheduled
        standby = self._standby
        if standby is not None:
            if self._took_over(standby, now=True):
                return  # its sync scans every file, this change too
            if standby.covered():
                log.debug("watch_change_left_to_lease_holder", paths=len(paths))
                return
        self.request(SyncTrigger.WATCH)

    def _took_over(self, standby: LeaseStandby, *, now: bool = False) -> bool:
        """Hold the lease once its holder is gone; from then on this process syncs what its
        watcher sees, starting with a scan that finds whatever the holder left undone."""
        if not standby.take_over(now=now):
            return False
        with self._lock:
            lease, answer = self._lease, self._answer
            assert lease is not None
            if self._standby is not standby:  # stopped meanwhile: hold nothing
                lease.release()
                return False
            self._standby, self._leased = None, True
            if answer is not None:
                lease.answer(answer)
        log.info("watch_lease_taken_over")
        self.request(SyncTrigger.WATCH)
        return True

    def _loop(self) -> None:
        while not self._stopping.is_set():
            standby = self._standby
            if standby is not None:
                self._took_over(standby)
            with self._lock:
                now = self._clock.monotonic()
                trigger = self._plan.due(now)
                wait = self._plan.wait(now) if trigger is None else 0.0
                backfill = self._vectors_pending
            if trigger is None and backfill:
                self._backfill_step()
                continue
            if trigger is None:
                if standby is not None:  # look again for a holder that is gone
                    wait = standby.wait() if wait is None else min(wait, standby.wait())
                self._wake.wait(wait)
                self._wake.clear()
                continue
            self._run(trigger)

    def _run(self, trigger: SyncTrigger) -> None:
        with self._lock:
            # Requests arriving during the sync stay pending: the sync may have scanned past them.
            # A scheduled retry is answered by this sync, whatever its trigger.
            self._plan.synced(self._clock.monotonic())
            changes_before = self._changes_seen
        if self._stopping.is_set():
            return
        report = None
        mark = self._before_scan() if self._before_scan is not None else None
        try:
            # Vectors are left to the batches between syncs (`_backfill_step`).
            report = self._sync(trigger)
        except Exception as exc:
            self._failed(trigger, exc)
        else:
            self._did_not_fail(report)
        refusal = self._syncing.refusal
        if refusal is not None and refusal != self._refusal_told:
            log.error("background_sync_refused", reason=trigger.value, detail=refusal)
        self._refusal_told = refusal
        if self._after_scan is not None:
            self._after_scan(mark, report)
        with self._lock:
            self._vectors_pending = True
            if self._leased and self._lease is not None:
                # Fresh: the sync succeeded, held nothing back, and no change came while it ran;
                # with a change journal, also only while it vouches for what it watches (a
                # folder link it cannot watch makes `seen` None: other processes must scan).
                quiet = self._changes_seen == changes_before and self._plan.pending is None
                clean = report is not None and report.files_held_back == 0
                vouched = self._before_scan is None or mark is not None
                self._lease.set_fresh(quiet and clean and vouched)

    def _sync(self, trigger: SyncTrigger) -> SyncReport | None:
        def sync() -> SyncReport | None:
            return self._syncing.run_unless_read_only(trigger, backfill_limit=0)

        return sync() if self._verdicts is None else self._verdicts.run(trigger, sync)

    def _failed(self, trigger: SyncTrigger, error: Exception) -> None:
        """Log a failed sync and, unless only the user can fix its cause, schedule it again:
        nothing else may ask (the interval sync is off by default, the change is already seen).
        Called in the `except` block (the log takes the traceback from there)."""
        if _needs_the_user(error):
            self._failures = 0
            log.exception("background_sync_failed", reason=trigger.value, retry=False)
            return
        self._syncing.mark_dirty()  # what failed is still to do, whatever the sync got to
        self._failures += 1
        delay = self._backoff.delay(self._failures)
        with self._lock:
            self._plan.retry(trigger, self._clock.monotonic() + delay)
        # One line per attempt (a store down for hours must not flood the log); the traceback
        # with the first failure of a series only.
        log.warning(
            "background_sync_failed",
            reason=trigger.value,
            attempt=self._failures,
            retry_in_s=delay,
            error=repr(error),
            exc_info=self._failures == 1,
        )

    def _did_not_fail(self, report: SyncReport | None) -> None:
        """End a series of retries: the sync went through, or stopped for the user (a mass
        deletion, a read-only store: None), who or the next change takes it from there."""
        if self._failures and report is not None:
            log.info("background_sync_recovered", reason=report.reason, attempts=self._failures)
        self._failures = 0

    def _backfill_step(self) -> None:
        """One batch of the vector backfill; when none is left (or the provider failed), wait
        for the next sync (or `backfill`), which may bring new chunks."""
        with self._lock:
            asked = self._backfills_asked
        try:
            done = self._syncing.backfill_step(self._stopping.is_set)
        except Exception:
            log.exception("background_backfill_failed")
            done = 0
        with self._lock:
            if done == 0 and self._backfills_asked == asked:
                self._vectors_pending = False
