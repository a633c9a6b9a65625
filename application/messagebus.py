"""Application: the message bus; routes logged events to handlers and tracks their progress.

Events are appended to the durable log *before* anything reacts. Each handler keeps its own
position in the log. Handlers are idempotent (they replace whole files, compare hashes), so the
bus advances a handler's position right after the handler's own transaction committed: a crash
in between repeats one harmless step and loses nothing. Follow-up events a handler returns are
appended to the log and handled in the same `catch_up`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import structlog

from memlane.application.ports.clock import Clock
from memlane.application.ports.event_log import EventLog, RecordedEvent
from memlane.domain.events import Event, type_name

log = structlog.get_logger()

# A handler that fails this many times on the same event skips it (with an error log), so one
# poisonous event cannot block the log forever.
MAX_ATTEMPTS = 3


class Handler(Protocol):
    """A use case reacting to events; returns follow-up events."""

    @property
    def name(self) -> str:
        """Stable name under which the bus tracks this handler's position."""
        ...

    def __call__(self, event: Event) -> Sequence[Event]:
        """Handle one event; raise to have it retried on the next catch-up."""
        ...


Routes = Mapping[type[Event], Sequence[Handler]]


@dataclass(frozen=True, slots=True)
class HandlerFailure:
    """A handler that raised on an event: nothing of that event was committed."""

    handler: str
    event_type: str
    position: int
    subject: str  # the file the event is about, or the event type
    error: str  # one line: the exception's type and first line


def _subject(event: Event) -> str:
    path = getattr(event, "path", None)
    return str(path) if path else type_name(event)


def _one_line(exc: BaseException) -> str:
    first = (str(exc).strip().splitlines() or [""])[0]
    text = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."


class MessageBus:
    """Appends events and drives every routed handler through the log, in order."""

    def __init__(self, log_store: EventLog, routes: Routes, clock: Clock) -> None:
        self._log = log_store
        self._clock = clock
        self._handlers: dict[str, Handler] = {}
        self._types: dict[str, tuple[type[Event], ...]] = {}
        for event_type, handlers in routes.items():
            for handler in handlers:
                self._handlers[handler.name] = handler
                self._types[handler.name] = (*self._types.get(handler.name, ()), event_type)
        self._failures: dict[tuple[str, int], int] = {}
        self._failed: list[HandlerFailure] = []  # since the last take_failures()
        self._lock = threading.RLock()
        self._listeners: list[Callable[[RecordedEvent], None]] = []

    def subscribe(self, listener: Callable[[RecordedEvent], None]) -> Callable[[], None]:
        """Call `listener` for every event appended from now on; return an unsubscribe function."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def publish(self, events: Sequence[Event]) -> int:
        """Append `events` durably, then handle everything pending; return events handled."""
        with self._lock:
            self._append(events)
            return self.catch_up()

    def record(self, events: Sequence[Event]) -> None:
        """Append facts no handler reacts to (a sync's verdict) without running any handler:
        handlers that had nothing pending move past them, so they never count as pending work.
        Only when nothing else came in between (another process's events stay pending)."""
        with self._lock:
            before = self._log.last_position()
            idle = [name for name in self._handlers if self._log.tracked(name) >= before]
            positions = self._log.append(events)
            self._notify(positions, events)
            if positions and positions[0] == before + 1:
                for name in idle:
                    self._log.track(name, positions[-1])

    def forget_failures_up_to(self, position: int) -> None:
        """Forget the failures of events at or before `position`: a full rebuild since then
        indexed every file again, so what they failed to do is done."""
        with self._lock:
            self._failed = [f for f in self._failed if f.position > position]

    def take_failures(self) -> list[HandlerFailure]:
        """Return the handler failures since the last call, and forget them."""
        with self._lock:
            failed, self._failed = self._failed, []
        # One entry per (handler, event): a retry within the same sync is the same failure.
        return list({(f.handler, f.position): f for f in failed}.values())

    def pending(self) -> int:
        """Return how many logged events some handler has not processed yet."""
        last = self._log.last_position()
        if not self._handlers:
            return 0
        lowest = min(self._log.tracked(name) for name in self._handlers)
        return max(0, last - lowest)

    def catch_up(self) -> int:
        """Run every handler over the events it has not processed; return how many it handled."""
        handled = 0
        blocked: set[str] = set()  # failed once in this round: retried on the next catch-up
        with self._lock:
            progress = True
            while progress:
                progress = False
                for name, handler in self._handlers.items():
                    if name in blocked:
                        continue
                    count, failed = self._run_handler(name, handler)
                    if failed:
                        blocked.add(name)
                    handled += count
                    progress = progress or count > 0
        return handled

    def _append(self, events: Sequence[Event]) -> None:
        if not events:
            return
        self._notify(self._log.append(events), events)

    def _notify(self, positions: Sequence[int], events: Sequence[Event]) -> None:
        for position, event in zip(positions, events, strict=True):
            for listener in list(self._listeners):
                try:
                    listener(RecordedEvent(position=position, event=event))
                except Exception:  # a listener's bug must not break indexing
                    log.exception("event_listener_failed")

    def _run_handler(self, name: str, handler: Handler) -> tuple[int, bool]:
        """Feed `handler` its pending events; return (handled, stopped on a failure)."""
        handled = 0
        wanted = self._types[name]
        while True:
            position = self._log.tracked(name)
            batch = self._log.read(after=position, limit=200)
            if not batch:
                return handled, False
            for record in batch:
                if isinstance(record.event, wanted):
                    if not self._dispatch(name, handler, record):
                        return handled, True
                    handled += 1
                    self._log.track(name, record.position)
            # Events of other types need no work: one write moves past all of them.
            self._log.track(name, batch[-1].position)

    def _dispatch(self, name: str, handler: Handler, record: RecordedEvent) -> bool:
        """Run one handler on one event; False when it failed and should be retried later."""
        started = self._clock.monotonic()
        event_type = type_name(record.event)
        try:
            follow_ups = handler(record.event)
        except Exception as exc:
            key = (name, record.position)
            self._failed.append(
                HandlerFailure(
                    name, event_type, record.position, _subject(record.event), _one_line(exc)
                )
            )
            attempts = self._failures.get(key, 0) + 1
            self._failures[key] = attempts
            if attempts < MAX_ATTEMPTS:
                log.warning(
                    "handler_failed",
                    handler=name,
                    event_type=event_type,
                    position=record.position,
                    attempt=attempts,
                    error=repr(exc),
                )
                return False
            log.error(
                "handler_gave_up",
                handler=name,
                event_type=event_type,
                position=record.position,
                error=repr(exc),
            )
            self._failures.pop(key, None)
            return True
        self._append(follow_ups)
        log.info(
            "event_handled",
            handler=name,
            event_type=event_type,
            position=record.position,
            duration_ms=round((self._clock.monotonic() - started) * 1000, 2),
        )
        return True
