"""Application: what the facade tells about the index (the reporting family): the status
report with the live watcher of this index, and the event log's tail and stream."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from memlane.application.messagebus import MessageBus
from memlane.application.ports.event_log import EventLog, RecordedEvent
from memlane.application.reports import StatusReport
from memlane.application.status import StatusReporter
from memlane.application.upkeep import IndexWatcher
from memlane.domain.config import MemorySettings
from memlane.domain.errors import DISABLED_REASON


class Reporting:
    """Status and events of one agent's index."""

    def __init__(
        self,
        *,
        settings: MemorySettings,
        status: StatusReporter,
        watcher: IndexWatcher,
        event_log: EventLog,
        bus: MessageBus,
    ) -> None:
        self._settings = settings
        self._status = status
        self._watcher = watcher
        self._log = event_log
        self._bus = bus

    def status(self, *, deep: bool) -> StatusReport:
        report = self._status.report(deep=deep)
        if not self._settings.enabled:
            # Said first (every face shows the warnings): an empty index must not read as a
            # healthy one.
            report = replace(report, warnings=(DISABLED_REASON, *report.warnings))
        watcher = self._watcher.holder()
        if watcher is None:
            return report
        # A watching process with changes it has not indexed yet: the index is behind the
        # files, whichever process asks (another one said "Dirty: no" beside "changes pending").
        return replace(report, watcher=watcher, dirty=report.dirty or not watcher.fresh)

    def recent_events(self, limit: int) -> list[RecordedEvent]:
        return self._log.tail(limit)

    def subscribe(self, callback: Callable[[RecordedEvent], None]) -> Callable[[], None]:
        return self._bus.subscribe(callback)
