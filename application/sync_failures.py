"""Application: the last sync failure of an index, kept in the event log until a sync goes through.

A sync that fails in the background (the watcher's, a search's) is only logged by the process it
ran in; `status` run later, often in another process, saw a dirty index and not why. So a failed
sync appends its verdict to the durable log (`SyncFailed`: trigger and reasons), and the first
sync that goes through after it appends `SyncRecovered`. The newest verdict near the log's end is
the state: `status` in any process derives it from there, no other state is kept. A verdict the
log cannot take (the store is what failed) is kept in this process and said by its `status`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Final, TypeVar

import structlog

from memlane.application.mass_delete import ALLOW_HINT, MassDeletion
from memlane.application.messagebus import MessageBus
from memlane.application.ports.clock import Clock
from memlane.application.ports.event_log import EventLog, EventLogError
from memlane.application.ports.index_store import StoreError
from memlane.application.reports import SyncFailure, SyncReport
from memlane.application.sync import SyncService
from memlane.application.sync_refusal import FORCE_HINT, IndexFromNewerMemlane
from memlane.application.sync_trigger import SyncFailed, SyncTrigger
from memlane.domain import events
from memlane.domain.url_passwords import mask_url_passwords

log = structlog.get_logger()

# How far back from the log's end a verdict is looked for. After a failure, only a sync that has
# not ended (running, or killed) appends without a verdict of its own; one of 500 events is rare.
VERDICT_WINDOW: Final = 500
MAX_REASONS: Final = 3
_MAX_REASON_CHARS: Final = 200

R = TypeVar("R", SyncReport, SyncReport | None)


class SyncVerdicts:
    """Records each sync's failure, and the recovery after one; answers the last failure."""

    def __init__(
        self, *, event_log: EventLog, bus: MessageBus, clock: Clock, syncing: SyncService
    ) -> None:
        self._log = event_log
        self._bus = bus
        self._clock = clock
        self._syncing = syncing
        self._lock = threading.Lock()
        self._unkept: SyncFailure | None = None  # a failure the log could not take
        self._seen: tuple[int, SyncFailure | None] | None = None  # (log position, verdict)

    def run(self, trigger: SyncTrigger, sync: Callable[[], R]) -> R:
        """Run `sync` (a call of the SyncService), recording its verdict; its error is raised.

        A refused mass deletion is a verdict too: the index stays behind the files until a sync
        goes through, and `status` in another process must say so (a search's or the
        background's sync returns None for it, so the service's new refusal is looked at). A
        sync that returns without running (skipped for another process's work, a read-only
        store) leaves the verdict as it was: only a report that is the service's last one went
        through."""
        refused_before = self._syncing.refused_by
        try:
            report = sync()
        except Exception as exc:
            self.failed(trigger, exc)
            raise
        last = self._syncing.last_report  # None (no sync ran here yet) is no verdict
        if last is not None and report is last:
            self.went_through(trigger)
        elif report is None:
            refused = self._syncing.refused_by
            if refused is not None and refused is not refused_before:
                self.failed(trigger, refused)
        return report

    def failed(self, trigger: SyncTrigger, error: Exception) -> None:
        """Record that a sync for `trigger` failed with `error`."""
        reasons = _reasons(error)
        try:
            newest = self._newest()
        except (EventLogError, StoreError):
            newest = None
        if newest is not None and newest.reasons == reasons:
            # The same failure again (a watcher retrying a refused sync on every change): the
            # log says it already, since it first happened.
            with self._lock:
                self._unkept = None
            return
        event = events.SyncFailed(
            occurred_at=self._clock.now(), trigger=trigger.value, reasons="\n".join(reasons)
        )
        failure = SyncFailure(event.occurred_at.isoformat(), trigger.value, reasons)
        try:
            self._bus.record([event])
        except (EventLogError, StoreError) as kept_here:
            log.warning("sync_failure_not_logged", error=str(kept_here), trigger=trigger.value)
            with self._lock:
                self._unkept = failure
            return
        with self._lock:
            self._unkept = None

    def went_through(self, trigger: SyncTrigger) -> None:
        """Record that a sync went through: a failure the log holds is over (said once)."""
        with self._lock:
            self._unkept = None
        try:
            if self._newest() is None:
                return  # nothing to clear: a sync that did nothing writes nothing
            self._bus.record(
                [events.SyncRecovered(occurred_at=self._clock.now(), trigger=trigger.value)]
            )
        except (EventLogError, StoreError) as exc:  # status keeps saying the failure: logged
            log.warning("sync_recovery_not_logged", error=str(exc), trigger=trigger.value)

    def last_failure(self) -> SyncFailure | None:
        """The last sync failure of the index, None once a sync went through after it."""
        with self._lock:
            if self._unkept is not None:
                return self._unkept
        try:
            return self._newest()
        except (EventLogError, StoreError) as exc:
            log.warning("sync_failure_unknown", error=str(exc))
            return None

    def _newest(self) -> SyncFailure | None:
        """The failure the newest verdict near the log's end states, None for a recovery or no
        verdict; read again only when the log moved."""
        position = self._log.last_position()
        with self._lock:
            if self._seen is not None and self._seen[0] == position:
                return self._seen[1]
        found: SyncFailure | None = None
        for record in reversed(self._log.tail(VERDICT_WINDOW)):
            event = record.event
            if isinstance(event, events.SyncRecovered):
                break
            if isinstance(event, events.SyncFailed):
                reasons = tuple(event.reasons.splitlines())
                found = SyncFailure(event.occurred_at.isoformat(), event.trigger, reasons)
                break
        with self._lock:
            self._seen = (position, found)
        return found


def _reasons(error: Exception) -> tuple[str, ...]:
    """Why a sync failed, one short line each: the changes it could not write, else the error.
    Passwords of URLs are masked: the log is read by every `events` and `status`."""
    if isinstance(error, SyncFailed):
        lines = [f"{f.subject}: {f.error}" for f in error.failures]
    elif isinstance(error, MassDeletion):
        lines = [error.summary, f"if they were deleted on purpose: {ALLOW_HINT}"]
    elif isinstance(error, IndexFromNewerMemlane):
        lines = [
            f"the index was built by a newer memlane ({error.detail}): not rebuilt down",
            f"to rebuild it with this one: {FORCE_HINT}",
        ]
    else:
        first = (str(error).strip().splitlines() or [""])[0]
        lines = [f"{type(error).__name__}: {first}" if first else type(error).__name__]
    if len(lines) > MAX_REASONS:
        lines = [*lines[: MAX_REASONS - 1], f"and {len(lines) - MAX_REASONS + 1} more"]
    return tuple(_short(mask_url_passwords(line)) for line in lines)


def _short(line: str) -> str:
    return line if len(line) <= _MAX_REASON_CHARS else line[: _MAX_REASON_CHARS - 3] + "..."
