"""E2E over gRPC: WatchEvents streams the manager's events to the subscribers (see _grpc_support)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import grpc
import pytest

from memlane.domain.events import FileChanged, FileIndexed, FileRemoved
from memlane.entrypoints.grpc._generated import memlane_pb2_grpc
from memlane.entrypoints.grpc.client import MemlaneClient
from memlane.entrypoints.grpc.servicer import MemoryServicer
from tests.e2e._grpc_support import (
    CODE,
    T0,
    TOKEN,
    CannedManager,
    Served,
    eventually,
    rpc_error,
    serve,
)
from tests.e2e._grpc_support import canned as canned  # noqa: PLC0414 (a fixture)
from tests.e2e._grpc_support import canned_served as canned_served  # noqa: PLC0414 (a fixture)
from tests.e2e._grpc_support import manager as manager  # noqa: PLC0414 (a fixture)
from tests.e2e._grpc_support import served as served  # noqa: PLC0414 (a fixture)

pytestmark = pytest.mark.e2e


class TestWatchEvents:
    def test_replays_the_recent_tail(self, served: Served) -> None:
        stream = served.client.events(tail=2, timeout=10)

        got = [next(stream).to_recorded(), next(stream).to_recorded()]
        stream.close()

        assert got == served.manager.recent_events(2)

    def test_an_event_appended_after_the_stream_starts_arrives(
        self, canned_served: Served, canned: CannedManager
    ) -> None:
        """The stream subscribes before replaying, so the next appended event is delivered."""
        stream = canned_served.client.events(tail=1, timeout=10)
        next(stream)  # the replayed tail: the server is subscribed from here on

        appended = canned.append(
            FileIndexed(
                occurred_at=T0 + timedelta(minutes=5),
                source="sessions",
                path="sessions/abc.jsonl",
                chunks=2,
                embedded=1,
                cached=1,
                duration_ms=3.25,
            )
        )
        got = next(stream)
        stream.close()

        assert got.to_recorded() == appended
        assert got.type == "file_indexed"
        assert got.fields["path"] == "sessions/abc.jsonl"

    def test_resumes_after_a_position(self, canned_served: Served, canned: CannedManager) -> None:
        stream = canned_served.client.events(after_position=1, timeout=10)

        got = [next(stream).position, next(stream).position]
        stream.close()

        assert got == [2, 3]

    def test_a_position_past_the_end_of_the_log_is_refused_not_waited_on(
        self, canned_served: Served, canned: CannedManager
    ) -> None:
        """The log ends at 3: position 100 belongs to another (or a replaced) log, and the
        stream used to stay open and silent until this log got that far."""
        error = rpc_error(lambda: next(canned_served.client.events(after_position=100, timeout=10)))

        assert error.code is CODE.INVALID_ARGUMENT
        assert "after_position 100 is past the end of the event log (3)" in error.details
        assert eventually(lambda: canned.subscribers == 0)

    def test_the_last_position_itself_resumes_with_the_next_event(
        self, canned_served: Served, canned: CannedManager
    ) -> None:
        stream = canned_served.client.events(after_position=3, timeout=10)
        appended = canned.append(
            FileChanged(occurred_at=T0, source="memory", path="MEMORY.md", mtime=1.0, size=2)
        )

        got = next(stream)
        stream.close()

        assert got.to_recorded() == appended

    def test_tail_and_after_position_together_are_refused(
        self, canned_served: Served, canned: CannedManager
    ) -> None:
        error = rpc_error(
            lambda: next(canned_served.client.events(tail=1, after_position=2, timeout=10))
        )

        assert error.code is CODE.INVALID_ARGUMENT
        assert "tail or after_position, not both" in error.details
        assert canned.subscribers == 0

    def test_filters_by_type(self, canned_served: Served, canned: CannedManager) -> None:
        stream = canned_served.client.events(tail=3, types=["file_removed"], timeout=10)
        first = next(stream)

        canned.append(
            FileChanged(occurred_at=T0, source="memory", path="MEMORY.md", mtime=1.0, size=2)
        )
        removed = canned.append(FileRemoved(occurred_at=T0, source="memory", path="a.md"))
        second = next(stream)
        stream.close()

        assert (first.position, first.type) == (3, "file_removed")
        assert second.to_recorded() == removed

    @pytest.mark.parametrize("types", [["file_indexd"], ["FILE_INDEXED", "file_removed"]])
    def test_an_unknown_type_is_refused_not_waited_on_forever(
        self, canned_served: Served, canned: CannedManager, types: list[str]
    ) -> None:
        error = rpc_error(lambda: next(canned_served.client.events(types=types, timeout=10)))

        assert error.code is CODE.INVALID_ARGUMENT
        assert types[0] in str(error) and "file_indexed" in str(error)  # the known ones named
        assert canned.subscribers == 0

    def test_unsubscribes_when_the_client_leaves(
        self, canned_served: Served, canned: CannedManager
    ) -> None:
        stream = canned_served.client.events(tail=1, timeout=10)
        next(stream)
        assert canned.subscribers == 1

        stream.close()

        assert eventually(lambda: canned.subscribers == 0)

    def test_a_watcher_that_reads_too_slowly_is_dropped(self, canned: CannedManager) -> None:
        """Past its backlog the stream ends with RESOURCE_EXHAUSTED instead of growing."""
        server = grpc.server(ThreadPoolExecutor(max_workers=4))
        memlane_pb2_grpc.add_MemoryServiceServicer_to_server(
            MemoryServicer(canned, max_backlog=2), server
        )
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        try:
            with MemlaneClient(f"127.0.0.1:{port}") as client:
                stream = client.events(tail=1, timeout=10)
                next(stream)
                for n in range(5):
                    canned.append(FileRemoved(occurred_at=T0, source="memory", path=f"{n}.md"))

                error = rpc_error(lambda: list(stream))
        finally:
            server.stop(None).wait(5)

        assert error.code is CODE.RESOURCE_EXHAUSTED

    def test_refuses_streams_beyond_the_limit(self, canned: CannedManager) -> None:
        """With 2 workers one stream is allowed, so a unary call always finds a thread."""
        with serve(canned, token=TOKEN, max_workers=2) as s:
            first = s.client.events(tail=1, timeout=10)
            next(first)

            error = rpc_error(lambda: next(s.client.events(tail=1, timeout=10)))
            status = s.client.status()
            first.close()

        assert error.code is CODE.RESOURCE_EXHAUSTED
        assert status.agent_id == "main"
