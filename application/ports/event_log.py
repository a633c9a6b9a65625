"""Port: the durable, totally ordered log of domain events, with per-handler tracking.

Errors: EventLogError (storage failure). Positions start at 1 and only grow; a position is never
reused, even after compaction.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from memlane.domain.events import Event, event_from_record


class EventLogError(Exception):
    """The log could not be read or written."""


@dataclass(frozen=True, slots=True)
class RecordedEvent:
    """An event with its position in the log."""

    position: int
    event: Event


class EventLog(Protocol):
    """Append-only event storage plus the last position each handler has processed.

    Contract:
    * `append` stores all events atomically (all or none) and returns their positions, in order,
      each greater than every earlier position;
    * `read(after, limit)` returns events with position > `after`, ascending, at most `limit`;
    * `tracked(handler)` is 0 for a handler never seen; `track(handler, position)` stores it
      durably and never moves it backwards (a lower position is ignored);
    * `compact(keep_last)` deletes events that every tracked handler has processed, except the
      newest `keep_last` of them, and returns how many it deleted; positions are unaffected;
    * `last_position()` is the highest position ever appended (0 for an empty log), compaction
      notwithstanding.
    """

    def append(self, events: Sequence[Event]) -> list[int]:
        """Store `events` atomically; return their positions."""
        ...

    def read(self, after: int = 0, limit: int = 1000) -> list[RecordedEvent]:
        """Return up to `limit` events with position greater than `after`, oldest first."""
        ...

    def tail(self, limit: int) -> list[RecordedEvent]:
        """Return the newest `limit` events, oldest first."""
        ...

    def last_position(self) -> int:
        """Return the highest position appended so far (0 if none)."""
        ...

    def tracked(self, handler: str) -> int:
        """Return the last position `handler` has finished (0 if none)."""
        ...

    def track(self, handler: str, position: int) -> None:
        """Record that `handler` has finished every event up to `position`."""
        ...

    def compact(self, keep_last: int = 1000) -> int:
        """Delete processed events beyond the newest `keep_last`; return how many."""
        ...


def recorded_from_rows(rows: Sequence[Sequence[object]]) -> list[RecordedEvent]:
    """Decode stored `(position, type name, JSON data)` rows, the format every event-log adapter
    keeps; a row that cannot be read is an EventLogError naming its position."""
    result = []
    for position, name, data in rows:
        try:
            event = event_from_record(str(name), json.loads(str(data)))
        except (KeyError, TypeError, ValueError) as exc:
            raise EventLogError(f"event {position} ({name}) cannot be read: {exc}") from exc
        result.append(RecordedEvent(int(str(position)), event))
    return result
