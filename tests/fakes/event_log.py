"""Fake: an in-memory EventLog with the same contract as SqliteEventLog."""

from __future__ import annotations

from collections.abc import Sequence

from memlane.application.ports.event_log import RecordedEvent
from memlane.domain.events import Event


class FakeEventLog:
    """Events in a list, positions from a counter that never goes back."""

    def __init__(self) -> None:
        self._events: list[RecordedEvent] = []
        self._last = 0
        self._tracking: dict[str, int] = {}

    def append(self, events: Sequence[Event]) -> list[int]:
        positions = []
        for event in events:
            self._last += 1
            self._events.append(RecordedEvent(self._last, event))
            positions.append(self._last)
        return positions

    def read(self, after: int = 0, limit: int = 1000) -> list[RecordedEvent]:
        if limit <= 0:
            return []
        return [e for e in self._events if e.position > after][:limit]

    def tail(self, limit: int) -> list[RecordedEvent]:
        if limit <= 0:
            return []
        return self._events[-limit:]

    def last_position(self) -> int:
        return self._last

    def tracked(self, handler: str) -> int:
        return self._tracking.get(handler, 0)

    def track(self, handler: str, position: int) -> None:
        self._tracking[handler] = max(position, self._tracking.get(handler, 0))

    def compact(self, keep_last: int = 1000) -> int:
        if not self._tracking:
            return 0
        processed = [e for e in self._events if e.position <= min(self._tracking.values())]
        doomed = processed[: max(0, len(processed) - max(0, keep_last))]
        gone = {e.position for e in doomed}
        self._events = [e for e in self._events if e.position not in gone]
        return len(doomed)
