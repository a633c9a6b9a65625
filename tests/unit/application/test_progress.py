"""ProgressTracker: a sync with a callback reports to it; one without logs a line at most every
`log_every` seconds on the injected clock (files, chunks, rate, ETA)."""

from __future__ import annotations

import structlog

from memlane.application.progress import ProgressTracker
from memlane.application.reports import SyncProgress
from tests.fakes.clock import FakeClock


def _run(tracker: ProgressTracker, clock: FakeClock, files: int, step: float) -> None:
    tracker.set_phase("rebuild", total=files)
    for _ in range(files):
        clock.advance(step)
        tracker.embedded(3)
        tracker.file_done()


def test_a_sync_nobody_watches_logs_at_most_every_interval() -> None:
    clock = FakeClock()
    tracker = ProgressTracker(clock, log_every=10.0)
    with structlog.testing.capture_logs() as logs:
        tracker.start(None)
        _run(tracker, clock, files=40, step=1.0)  # 40 s in all

    lines = [e for e in logs if e["event"] == "sync_progress"]
    assert [e["elapsed_s"] for e in lines] == [10.0, 20.0, 30.0, 40.0]
    first = lines[0]
    assert (first["phase"], first["files_done"], first["files_total"]) == ("rebuild", 9, 40)
    assert first["chunks_embedded"] == 30 and first["chunks_per_s"] == 3.0
    assert first["eta_s"] == round(10.0 / 9 * 31, 1)
    last = lines[-1]  # logged when the 40th file's chunks were embedded, before it was done
    assert (last["files_done"], last["eta_s"]) == (39, round(40.0 / 39 * 1, 1))
    assert all(e["log_level"] == "warning" for e in lines)  # seen at the default level


def test_a_short_sync_logs_nothing() -> None:
    clock = FakeClock()
    tracker = ProgressTracker(clock, log_every=10.0)
    with structlog.testing.capture_logs() as logs:
        tracker.start(None)
        _run(tracker, clock, files=5, step=1.0)

    assert [e for e in logs if e["event"] == "sync_progress"] == []


def test_a_callback_gets_every_step_and_nothing_is_logged() -> None:
    clock = FakeClock()
    tracker = ProgressTracker(clock, log_every=0.0)
    seen: list[SyncProgress] = []
    with structlog.testing.capture_logs() as logs:
        tracker.start(seen.append)
        _run(tracker, clock, files=3, step=20.0)

    assert len(seen) == 1 + 3 * 2 and seen[-1].files_done == 3
    assert logs == []


def test_without_a_clock_nothing_is_logged() -> None:
    tracker = ProgressTracker()
    with structlog.testing.capture_logs() as logs:
        tracker.start(None)
        tracker.set_phase("index", total=1)
        tracker.file_done()

    assert logs == []
