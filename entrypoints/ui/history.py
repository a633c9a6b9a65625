"""Entry point (ui): the syncs the event log shows, for the health page's timeline and plots.

A sync appends what changed (FileChanged, FileDeleted, SessionGrew, ReindexRequired) before any
handler reacts, then the handlers' outcome facts follow (FileIndexed, FileRemoved,
IndexRebuilt, ProviderFellBack). So a sync in the log is a run of change facts and the outcome
facts after it, up to the next change fact that follows an outcome.

Its duration is the time from its first fact to its last, at least the handlers' own
`duration_ms`. The index size after a sync is known from the log only where a rebuild states its
chunk count and nothing follows it in that sync: a file's indexing says how many chunks the
file has, not how many it had (a rebuild lists no files), so after it the size is unknown
(None). The health page plots the known sizes and the store's own count for now.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

from memlane.application.ports.event_log import RecordedEvent
from memlane.domain import events

_CHANGES = (events.FileChanged, events.FileDeleted, events.SessionGrew, events.ReindexRequired)
# A sync's verdict, appended when it ended (a failure may come hours after the last work, with
# none of its own): not work, so it neither joins nor stretches a run.
_VERDICTS = (events.SyncFailed, events.SyncRecovered)


@dataclass(frozen=True, slots=True)
class SyncRun:
    """One sync as the log shows it."""

    first_position: int
    started: float  # epoch seconds of its first fact
    finished: float  # of its last fact
    duration_ms: float
    files_indexed: int  # FileIndexed facts, plus the files a rebuild states it indexed
    files_removed: int
    rebuilt: bool
    chunks: int | None  # the index size after it, when the facts tell (module doc)


def sync_runs(records: Sequence[RecordedEvent]) -> list[SyncRun]:
    """The syncs of `records` (oldest first, as `recent_events` returns them), oldest first."""
    groups: list[list[RecordedEvent]] = []
    for record in records:
        if isinstance(record.event, _VERDICTS):
            continue
        is_change = isinstance(record.event, _CHANGES)
        after_outcome = bool(groups) and not isinstance(groups[-1][-1].event, _CHANGES)
        if not groups or (is_change and after_outcome):
            groups.append([record])
        else:
            groups[-1].append(record)
    runs = []
    for group in groups:
        indexed = removed = 0
        rebuilt = False
        work_ms = 0.0
        size: int | None = None
        for record in group:
            event = record.event
            if isinstance(event, events.IndexRebuilt):
                size, rebuilt = event.chunks, True
                indexed += event.files  # a rebuild lists no FileIndexed, it counts them
                work_ms += event.duration_ms
            elif isinstance(event, events.FileIndexed):
                size = None
                indexed += 1
                work_ms += event.duration_ms
            elif isinstance(event, events.FileRemoved):
                size = None
                removed += 1
        started = group[0].event.occurred_at.timestamp()
        finished = group[-1].event.occurred_at.timestamp()
        runs.append(
            SyncRun(
                first_position=group[0].position,
                started=started,
                finished=finished,
                duration_ms=round(max((finished - started) * 1000, work_ms), 1),
                files_indexed=indexed,
                files_removed=removed,
                rebuilt=rebuilt,
                chunks=size,
            )
        )
    return runs


class SizeSamples:
    """Index sizes a running UI saw, one per log position at which nothing was pending.

    The log states the size only at rebuilds (module doc); each time the UI reads the status (a
    page, the health page's poll) it keeps the store's own count for the log position it was at,
    at the time of the newest fact there, so the size line fills in while the UI runs.
    """

    def __init__(self, limit: int = 2000) -> None:
        self._limit = limit
        self._lock = threading.Lock()
        self._by_position: dict[int, tuple[float, int]] = {}

    def known(self, position: int) -> bool:
        with self._lock:
            return position in self._by_position

    def add(self, position: int, at: float, chunks: int) -> None:
        with self._lock:
            self._by_position[position] = (at, chunks)
            while len(self._by_position) > self._limit:
                del self._by_position[min(self._by_position)]

    def points(self) -> list[tuple[float, float]]:
        """(epoch seconds, chunks), oldest first."""
        with self._lock:
            return sorted((at, float(chunks)) for at, chunks in self._by_position.values())
