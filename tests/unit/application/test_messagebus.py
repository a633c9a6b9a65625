"""The message bus on a fake log: ordering, retries, giving up, crash recovery, subscribers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pytest
from structlog.testing import capture_logs

from memlane.application.messagebus import MAX_ATTEMPTS, Handler, MessageBus, Routes
from memlane.application.ports.event_log import RecordedEvent
from memlane.domain import events
from tests.fakes.clock import T0, FakeClock
from tests.fakes.event_log import FakeEventLog


class Crash(BaseException):
    """Stands for the process dying inside a handler: the bus must not swallow it."""


def changed(path: str) -> events.FileChanged:
    return events.FileChanged(occurred_at=T0, source="memory", path=path, mtime=1.0, size=1)


def deleted(path: str) -> events.FileDeleted:
    return events.FileDeleted(occurred_at=T0, source="memory", path=path)


def _path(event: events.Event) -> str:
    path = getattr(event, "path", None)
    return path if isinstance(path, str) else type(event).__name__


@dataclass
class Spy:
    """A handler that records what it saw; `failures[path]` makes it raise that many times."""

    name: str
    failures: dict[str, int] = field(default_factory=dict)
    crash_on: str | None = None
    follow_ups: Callable[[events.Event], Sequence[events.Event]] = lambda _: ()
    seen: list[str] = field(default_factory=list)
    attempts: list[str] = field(default_factory=list)

    def __call__(self, event: events.Event) -> Sequence[events.Event]:
        path = _path(event)
        self.attempts.append(path)
        if path == self.crash_on:
            raise Crash
        if self.failures.get(path, 0) > 0:
            self.failures[path] -= 1
            raise RuntimeError(f"boom on {path}")
        self.seen.append(path)
        return self.follow_ups(event)


def bus_for(log: FakeEventLog, routes: Routes, clock: FakeClock | None = None) -> MessageBus:
    return MessageBus(log, routes, clock or FakeClock())


def routes(*pairs: tuple[type[events.Event], Handler]) -> Routes:
    table: dict[type[events.Event], list[Handler]] = {}
    for event_type, handler in pairs:
        table.setdefault(event_type, []).append(handler)
    return table


class TestPublish:
    def test_events_are_logged_and_handled_in_log_order(self) -> None:
        log, spy = FakeEventLog(), Spy("index")
        bus = bus_for(log, routes((events.FileChanged, spy)))

        handled = bus.publish([changed("a.md"), changed("b.md"), changed("c.md")])

        assert handled == 3
        assert spy.seen == ["a.md", "b.md", "c.md"]
        assert [_path(r.event) for r in log.read()] == ["a.md", "b.md", "c.md"]
        assert log.tracked("index") == 3

    def test_each_handler_sees_only_the_event_types_routed_to_it(self) -> None:
        log, index, remove = FakeEventLog(), Spy("index"), Spy("remove")
        bus = bus_for(log, routes((events.FileChanged, index), (events.FileDeleted, remove)))

        bus.publish([changed("a.md"), deleted("b.md"), changed("c.md")])

        assert index.seen == ["a.md", "c.md"]
        assert remove.seen == ["b.md"]

    def test_a_handler_routed_for_two_types_gets_both_in_order(self) -> None:
        log, spy = FakeEventLog(), Spy("both")
        bus = bus_for(log, routes((events.FileChanged, spy), (events.FileDeleted, spy)))

        bus.publish([deleted("a.md"), changed("b.md")])

        assert spy.seen == ["a.md", "b.md"]

    def test_unrouted_events_move_the_position_without_a_call(self) -> None:
        log, spy = FakeEventLog(), Spy("index")
        bus = bus_for(log, routes((events.FileChanged, spy)))

        handled = bus.publish([deleted("x.md"), deleted("y.md")])

        assert (handled, spy.attempts) == (0, [])
        assert log.tracked("index") == 2
        assert bus.pending() == 0

    def test_more_events_than_one_read_batch_are_all_handled_in_order(self) -> None:
        log, spy = FakeEventLog(), Spy("index")
        bus = bus_for(log, routes((events.FileChanged, spy)))
        paths = [f"n{i:03}.md" for i in range(450)]

        assert bus.publish([changed(p) for p in paths]) == 450
        assert spy.seen == paths

    def test_follow_ups_are_logged_after_their_cause_and_handled_in_the_same_call(self) -> None:
        log = FakeEventLog()
        rebuild = Spy("rebuild")
        index = Spy(
            "index",
            follow_ups=lambda e: [
                events.ReindexRequired(occurred_at=T0, reason="model_changed", detail=_path(e))
            ],
        )
        bus = bus_for(log, routes((events.FileChanged, index), (events.ReindexRequired, rebuild)))

        handled = bus.publish([changed("a.md")])

        assert handled == 2
        assert rebuild.seen == ["ReindexRequired"]
        logged = log.read()
        assert [type(r.event) for r in logged] == [events.FileChanged, events.ReindexRequired]
        assert logged[1].position > logged[0].position

    def test_publishing_nothing_still_catches_up_on_what_is_pending(self) -> None:
        log, spy = FakeEventLog(), Spy("index")
        log.append([changed("left-over.md")])  # logged by an earlier process, never handled
        bus = bus_for(log, routes((events.FileChanged, spy)))

        assert bus.publish([]) == 1
        assert spy.seen == ["left-over.md"]

    def test_the_handling_time_is_measured_on_the_clock(self) -> None:
        clock = FakeClock()
        log = FakeEventLog()

        def slow(event: events.Event) -> Sequence[events.Event]:
            clock.advance(0.25)
            return ()

        spy = Spy("index", follow_ups=slow)
        bus = bus_for(log, routes((events.FileChanged, spy)), clock)

        with capture_logs() as logs:
            bus.publish([changed("a.md")])

        handled = [e for e in logs if e["event"] == "event_handled"]
        assert handled == [
            {
                "event": "event_handled",
                "log_level": "info",
                "handler": "index",
                "event_type": "file_changed",
                "position": 1,
                "duration_ms": 250.0,
            }
        ]


class TestFailures:
    def test_a_failed_event_is_retried_on_the_next_catch_up(self) -> None:
        log, spy = FakeEventLog(), Spy("index", failures={"b.md": 1})
        bus = bus_for(log, routes((events.FileChanged, spy)))

        first = bus.publish([changed("a.md"), changed("b.md"), changed("c.md")])

        # Order is kept: nothing after the failed event runs before it succeeds.
        assert (first, spy.seen, log.tracked("index")) == (1, ["a.md"], 1)
        assert bus.pending() == 2

        second = bus.catch_up()

        assert (second, spy.seen) == (2, ["a.md", "b.md", "c.md"])
        assert spy.attempts == ["a.md", "b.md", "b.md", "c.md"]
        assert bus.pending() == 0

    def test_a_failing_handler_is_tried_once_per_catch_up(self) -> None:
        log, spy = FakeEventLog(), Spy("index", failures={"a.md": 99})
        bus = bus_for(log, routes((events.FileChanged, spy)))

        bus.publish([changed("a.md")])

        assert spy.attempts == ["a.md"]

    def test_the_bus_gives_up_on_an_event_after_the_attempt_limit(self) -> None:
        log, spy = FakeEventLog(), Spy("index", failures={"poison.md": 99})
        bus = bus_for(log, routes((events.FileChanged, spy)))
        bus.publish([changed("poison.md"), changed("next.md")])
        for _ in range(MAX_ATTEMPTS - 2):
            bus.catch_up()
        assert spy.seen == []
        assert log.tracked("index") == 0

        with capture_logs() as logs:
            handled = bus.catch_up()  # the last allowed attempt fails: skip the event

        assert spy.attempts.count("poison.md") == MAX_ATTEMPTS
        assert spy.seen == ["next.md"]
        assert handled == 2  # the skipped event counts as dealt with
        assert log.tracked("index") == 2
        gave_up = [e for e in logs if e["event"] == "handler_gave_up"]
        assert len(gave_up) == 1
        assert gave_up[0]["log_level"] == "error"
        assert (gave_up[0]["handler"], gave_up[0]["position"]) == ("index", 1)

    def test_failures_below_the_limit_are_warnings_with_the_attempt_number(self) -> None:
        log, spy = FakeEventLog(), Spy("index", failures={"a.md": 2})
        bus = bus_for(log, routes((events.FileChanged, spy)))

        with capture_logs() as logs:
            bus.publish([changed("a.md")])
            bus.catch_up()
            bus.catch_up()

        warnings = [e for e in logs if e["event"] == "handler_failed"]
        assert [(w["log_level"], w["attempt"]) for w in warnings] == [
            ("warning", 1),
            ("warning", 2),
        ]
        assert spy.seen == ["a.md"]

    def test_attempts_are_counted_per_event(self) -> None:
        log = FakeEventLog()
        spy = Spy("index", failures={"a.md": MAX_ATTEMPTS - 1, "b.md": MAX_ATTEMPTS - 1})
        bus = bus_for(log, routes((events.FileChanged, spy)))
        bus.publish([changed("a.md"), changed("b.md")])

        for _ in range(2 * MAX_ATTEMPTS):
            bus.catch_up()

        # Each event failed fewer times than the limit, so both were eventually handled.
        assert spy.seen == ["a.md", "b.md"]

    def test_one_failing_handler_does_not_stop_the_others(self) -> None:
        log = FakeEventLog()
        broken, healthy = Spy("broken", failures={"a.md": 99}), Spy("healthy")
        bus = bus_for(log, routes((events.FileChanged, broken), (events.FileChanged, healthy)))

        bus.publish([changed("a.md"), changed("b.md")])

        assert healthy.seen == ["a.md", "b.md"]
        assert broken.attempts == ["a.md"]  # tried once, not again each time others progress
        # Positions are per handler: the healthy one is done, the broken one still waits.
        assert (log.tracked("healthy"), log.tracked("broken")) == (2, 0)
        assert bus.pending() == 2

    def test_a_failing_handler_does_not_block_follow_ups_for_other_handlers(self) -> None:
        log = FakeEventLog()
        rebuild = Spy("rebuild", failures={"ReindexRequired": 1})
        index = Spy(
            "index",
            follow_ups=lambda e: [events.ReindexRequired(occurred_at=T0, reason="model_changed")],
        )
        bus = bus_for(log, routes((events.FileChanged, index), (events.ReindexRequired, rebuild)))

        bus.publish([changed("a.md"), changed("b.md")])

        assert index.seen == ["a.md", "b.md"]
        assert rebuild.seen == []
        bus.catch_up()
        assert rebuild.seen == ["ReindexRequired", "ReindexRequired"]

    def test_a_failing_listener_does_not_break_handling(self) -> None:
        log, spy = FakeEventLog(), Spy("index")
        bus = bus_for(log, routes((events.FileChanged, spy)))

        def broken(record: RecordedEvent) -> None:
            raise ValueError("listener bug")

        bus.subscribe(broken)
        with capture_logs() as logs:
            handled = bus.publish([changed("a.md")])

        assert (handled, spy.seen) == (1, ["a.md"])
        assert [e["event"] for e in logs if e["log_level"] == "error"] == ["event_listener_failed"]


class TestCrashRecovery:
    def test_a_crash_mid_handler_keeps_the_position_and_the_next_bus_repeats_the_event(
        self,
    ) -> None:
        log = FakeEventLog()
        dying = Spy("index", crash_on="c.md")
        bus = bus_for(log, routes((events.FileChanged, dying)))

        with pytest.raises(Crash):
            bus.publish([changed(p) for p in ("a.md", "b.md", "c.md", "d.md")])

        assert dying.seen == ["a.md", "b.md"]
        assert log.tracked("index") == 2  # c.md was not acknowledged

        restarted = Spy("index")
        new_bus = bus_for(log, routes((events.FileChanged, restarted)))
        assert new_bus.pending() == 2

        assert new_bus.catch_up() == 2
        assert restarted.seen == ["c.md", "d.md"]  # c.md repeated, a.md and b.md not
        assert new_bus.pending() == 0

    def test_positions_of_handlers_are_independent_after_a_crash(self) -> None:
        log = FakeEventLog()
        first, dying = Spy("first"), Spy("second", crash_on="b.md")
        bus = bus_for(log, routes((events.FileChanged, first), (events.FileChanged, dying)))

        with pytest.raises(Crash):
            bus.publish([changed("a.md"), changed("b.md")])

        assert (log.tracked("first"), log.tracked("second")) == (2, 1)

        again_first, again_second = Spy("first"), Spy("second")
        new_bus = bus_for(
            log, routes((events.FileChanged, again_first), (events.FileChanged, again_second))
        )
        new_bus.catch_up()

        assert again_first.seen == []
        assert again_second.seen == ["b.md"]


class TestSubscribers:
    def test_listeners_see_every_appended_event_with_its_position(self) -> None:
        log = FakeEventLog()
        index = Spy(
            "index",
            follow_ups=lambda e: [
                events.FileRemoved(occurred_at=T0, source="memory", path=_path(e))
            ],
        )
        bus = bus_for(log, routes((events.FileChanged, index)))
        seen: list[tuple[int, str]] = []
        bus.subscribe(lambda r: seen.append((r.position, type(r.event).__name__)))

        bus.publish([changed("a.md")])

        assert seen == [(1, "FileChanged"), (2, "FileRemoved")]

    def test_unsubscribed_listeners_hear_nothing_more(self) -> None:
        log = FakeEventLog()
        bus = bus_for(log, routes())
        seen: list[int] = []
        unsubscribe = bus.subscribe(lambda r: seen.append(r.position))
        bus.publish([changed("a.md")])

        unsubscribe()
        unsubscribe()  # a second call is harmless
        bus.publish([changed("b.md")])

        assert seen == [1]

    def test_events_already_in_the_log_are_not_replayed_to_new_listeners(self) -> None:
        log = FakeEventLog()
        bus = bus_for(log, routes())
        bus.publish([changed("old.md")])
        seen: list[int] = []
        bus.subscribe(lambda r: seen.append(r.position))

        bus.catch_up()

        assert seen == []


class TestPending:
    def test_nothing_is_pending_without_handlers(self) -> None:
        log = FakeEventLog()
        log.append([changed("a.md")])

        assert bus_for(log, routes()).pending() == 0

    def test_pending_counts_from_the_slowest_handler(self) -> None:
        log = FakeEventLog()
        log.append([changed("a.md"), changed("b.md"), changed("c.md")])
        log.track("fast", 3)
        log.track("slow", 1)
        bus = bus_for(
            log, routes((events.FileChanged, Spy("fast")), (events.FileChanged, Spy("slow")))
        )

        assert bus.pending() == 2

    def test_catching_up_empties_the_pending_count(self) -> None:
        log = FakeEventLog()
        log.append([changed("a.md"), deleted("b.md")])
        bus = bus_for(log, routes((events.FileChanged, Spy("index"))))
        assert bus.pending() == 2

        bus.catch_up()

        assert bus.pending() == 0
