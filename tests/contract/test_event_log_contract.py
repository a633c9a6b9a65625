"""Contract: every EventLog (in-memory fake, SQLite, PostgreSQL) behaves alike."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memlane.adapters.postgres.database import PostgresDatabase
from memlane.adapters.postgres.postgres_event_log import PostgresEventLog
from memlane.adapters.store.database import SqliteDatabase
from memlane.adapters.store.sqlite_event_log import SqliteEventLog
from memlane.application.ports.event_log import EventLog
from memlane.domain import events
from tests.fakes.event_log import FakeEventLog
from tests.pg_server import unique_agent

T0 = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)


@pytest.fixture(
    params=[
        "fake",
        pytest.param("sqlite", marks=pytest.mark.integration),
        pytest.param("postgres", marks=[pytest.mark.integration, pytest.mark.postgres]),
    ]
)
def log(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[EventLog]:
    if request.param == "fake":
        yield FakeEventLog()
        return
    if request.param == "postgres":
        pg = PostgresDatabase.open(request.getfixturevalue("pg_database"))
        yield PostgresEventLog(pg, unique_agent())
        pg.close()
        return
    db = SqliteDatabase.open(tmp_path / "index.db")
    yield SqliteEventLog(db)
    db.close()


def changed(n: int) -> events.FileChanged:
    return events.FileChanged(
        occurred_at=T0 + timedelta(seconds=n),
        source="memory",
        path=f"memory/{n}.md",
        mtime=n,
        size=n,
    )


class TestAppendAndRead:
    def test_positions_start_at_one_and_grow(self, log: EventLog) -> None:
        """append returns increasing positions, in order."""
        first = log.append([changed(1), changed(2)])
        second = log.append([changed(3)])

        assert first == [1, 2]
        assert second == [3]
        assert log.last_position() == 3

    def test_events_round_trip_every_type(self, log: EventLog) -> None:
        """Each stored event reads back equal (type, fields, aware datetime)."""
        stored: list[events.Event] = [
            changed(1),
            events.FileDeleted(occurred_at=T0, source="sessions", path="sessions/x.jsonl"),
            events.SessionGrew(occurred_at=T0, path="s", from_size=1, to_size=9, new_messages=2),
            events.ReindexRequired(occurred_at=T0, reason="model_changed", detail="x → y"),
            events.FileIndexed(
                occurred_at=T0, source="memory", path="p", chunks=3, embedded=2, cached=1,
                duration_ms=1.5,
            ),
            events.IndexRebuilt(
                occurred_at=T0, reason="no_index", files=1, chunks=2, duration_ms=3.0
            ),
        ]  # fmt: skip
        log.append(stored)

        assert [r.event for r in log.read()] == stored

    def test_read_after_and_limit(self, log: EventLog) -> None:
        log.append([changed(n) for n in range(1, 6)])

        page = log.read(after=2, limit=2)

        assert [r.position for r in page] == [3, 4]
        assert log.read(after=5) == []
        assert log.read(limit=0) == []

    def test_tail_gives_the_newest_oldest_first(self, log: EventLog) -> None:
        log.append([changed(n) for n in range(1, 6)])

        assert [r.position for r in log.tail(2)] == [4, 5]
        assert [r.position for r in log.tail(10)] == [1, 2, 3, 4, 5]

    def test_empty_log(self, log: EventLog) -> None:
        assert log.last_position() == 0
        assert log.read() == []
        assert log.append([]) == []


class TestTracking:
    def test_unknown_handler_is_at_zero(self, log: EventLog) -> None:
        assert log.tracked("ReindexFile") == 0

    def test_track_never_moves_backwards(self, log: EventLog) -> None:
        log.track("ReindexFile", 5)
        log.track("ReindexFile", 3)

        assert log.tracked("ReindexFile") == 5


class TestCompact:
    def test_deletes_what_every_handler_processed_except_the_newest(self, log: EventLog) -> None:
        """Only events below every handler's position go, minus the newest `keep_last`."""
        log.append([changed(n) for n in range(1, 11)])
        log.track("a", 8)
        log.track("b", 6)

        removed = log.compact(keep_last=2)

        assert removed == 4
        assert [r.position for r in log.read()] == [5, 6, 7, 8, 9, 10]

    def test_positions_are_never_reused_after_compaction(self, log: EventLog) -> None:
        log.append([changed(n) for n in range(1, 4)])
        log.track("a", 3)

        assert log.compact(keep_last=0) == 3
        assert log.last_position() == 3
        assert log.append([changed(4)]) == [4]

    def test_nothing_is_processed_without_handlers(self, log: EventLog) -> None:
        log.append([changed(1)])

        assert log.compact(keep_last=0) == 0
