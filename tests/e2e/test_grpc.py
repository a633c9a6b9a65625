"""E2E: the real gRPC server on 127.0.0.1 (random port) talked to with the real client.

The server is driven by `CannedManager`, a hand-written stand-in for the memory manager with
canned data (a double of the driving side). Tests that take the `served` fixture use only what any
manager offers (the results of the same call made directly), so overriding the `manager` fixture
runs them against the real manager; tests that need to inject errors or append events take
`canned_served`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import grpc
import pytest
import structlog
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from memlane.application.mass_delete import MassDeletion, Removal
from memlane.application.ports.embedding import (
    EmbeddingRejected,
    EmbeddingTimeout,
    EmbeddingUnavailable,
    ProviderNotConfigured,
)
from memlane.application.ports.event_log import RecordedEvent
from memlane.application.ports.file_source import FileMissing, FileRefused
from memlane.application.ports.index_store import StoreError, VectorProgress
from memlane.application.reports import (
    GetResult,
    RecoveryStats,
    SearchResponse,
    SourceStatus,
    StatusReport,
    SyncProgress,
    SyncReport,
)
from memlane.application.sync_trigger import SyncTrigger
from memlane.domain.errors import ConfigError, InvalidQuery
from memlane.domain.events import Event, FileChanged, FileIndexed, FileRemoved
from memlane.domain.search import ScoreExplanation, SearchResult
from memlane.domain.sources import SourceIssue
from memlane.domain.time_bounds import parse_time_bound
from memlane.entrypoints.grpc._generated import memlane_pb2, memlane_pb2_grpc
from memlane.entrypoints.grpc.client import MemlaneClient, MemlaneRpcError
from memlane.entrypoints.grpc.server import TlsConfig, build_server
from memlane.entrypoints.grpc.servicer import SERVICE_NAME, MemoryServicer, ServedManager
from memlane.entrypoints.logging import configure_logging

pytestmark = pytest.mark.e2e

TOKEN = "tok-7f3a9c1e-not-a-real-secret"
T0 = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)
CODE = grpc.StatusCode

FILES = {
    "MEMORY.md": "# Memory\nWe deploy on Fridays.\nThe API uses gRPC.\n",
    "memory/2026-01-05.md": "部署在周五。\n数据库是 SQLite。\n",
    "sessions/abc.jsonl": '{"role":"user","content":"hi"}\n',
}


class CannedManager:
    """Stand-in for MemoryManager: canned results, records calls, raises `fail_with` when set."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, object]]] = []
        self.fail_with: Exception | None = None
        self._lock = threading.Lock()
        self._subscribers: list[Callable[[RecordedEvent], None]] = []
        self._events: list[RecordedEvent] = [
            RecordedEvent(
                1,
                FileChanged(
                    occurred_at=T0, source="memory", path="MEMORY.md", mtime=1767605400.25, size=61
                ),
            ),
            RecordedEvent(
                2,
                FileIndexed(
                    occurred_at=T0 + timedelta(seconds=1),
                    source="memory",
                    path="MEMORY.md",
                    chunks=1,
                    embedded=1,
                    cached=0,
                    duration_ms=12.5,
                ),
            ),
            RecordedEvent(
                3,
                FileRemoved(
                    occurred_at=T0 + timedelta(seconds=2), source="memory", path="memory/old.md"
                ),
            ),
        ]

    def _enter(self, name: str, **params: object) -> None:
        self.calls.append((name, params))
        if self.fail_with is not None:
            raise self.fail_with

    def search(
        self,
        query: str,
        *,
        max_results: int | None = None,
        min_score: float | None = None,
        explain: bool = False,
        session_key: str | None = None,
        agents: Sequence[str] | str | None = None,
        since: str | None = None,
        until: str | None = None,
        as_of: str | None = None,
    ) -> SearchResponse:
        given = {"agents": agents, "since": since, "until": until, "as_of": as_of}
        extra = {k: v for k, v in given.items() if v is not None}
        self._enter(
            "search",
            query=query,
            max_results=max_results,
            min_score=min_score,
            explain=explain,
            session_key=session_key,
            **extra,
        )
        if not query.strip():
            raise InvalidQuery("the query is empty")
        for name, value in (("since", since), ("until", until), ("as_of", as_of)):
            parse_time_bound(value, now=0.0, end=False, name=name)  # the manager's refusal
        results = [
            SearchResult(
                path="MEMORY.md",
                start_line=2,
                end_line=3,
                score=0.8125,
                snippet="We deploy on Fridays.\nThe API uses gRPC.",
                source="memory",
                citation="MEMORY.md#L2-L3",
                explanation=ScoreExplanation(0.75, None, 0.8125, 0.5, 1, 0.625)
                if explain
                else None,
                time="2026-01-05T09:30:00Z",
            ),
            SearchResult(
                path="memory/2026-01-05.md",
                start_line=1,
                end_line=2,
                score=0.5,
                snippet="部署在周五。\n数据库是 SQLite。",
                source="memory",
                explanation=ScoreExplanation(None, 0.25, 0.5) if explain else None,
                time="2026-01-05T00:00:00Z/2026-01-05T23:59:59Z",
            ),
        ]
        return SearchResponse(
            results=results[: max_results or 10],
            provider="local",
            model="multilingual-e5-small",
            mode="hybrid",
            warnings=("vector extension missing: in-process fallback",),
            time_words='"yesterday" → 2026-11-19' if "yesterday" in query else None,
        )

    def get(
        self,
        path: str,
        *,
        from_line: int | None = None,
        lines: int | None = None,
        agent: str | None = None,
    ) -> GetResult:
        self._enter("get", path=path, from_line=from_line, lines=lines, agent=agent)
        if path.startswith("/") or ".." in path.split("/"):
            raise FileRefused(path, "outside the memory files and transcripts")
        if path not in FILES:
            raise FileMissing(path, "no such file")
        start = from_line or 1
        all_lines = FILES[path].splitlines()
        chosen = all_lines[start - 1 : None if lines is None else start - 1 + lines]
        return GetResult(
            path=path,
            text="\n".join(chosen),
            from_line=start,
            lines=len(chosen),
            source="sessions" if path.startswith("sessions/") else "memory",
        )

    def sync(
        self,
        *,
        force: bool = False,
        trigger: SyncTrigger = SyncTrigger.EXPLICIT,
        progress: Callable[[SyncProgress], None] | None = None,
        wait_for_vectors: bool = True,
    ) -> SyncReport:
        self._enter("sync", force=force, trigger=trigger, wait_for_vectors=wait_for_vectors)
        return SyncReport(
            reason=trigger.value,
            full_reindex=force,
            files_indexed=2,
            files_removed=1,
            files_unchanged=7,
            chunks_embedded=5,
            vectors_backfilled=0,
            events_handled=4,
            duration_ms=31.5,
            issues=[SourceIssue("memory/big.md", "larger than 10 MB")],
            warnings=("embedding provider openai failed (HTTP 500); keyword-only",),
            vectors=VectorProgress(done=9 if wait_for_vectors else 4, total=9),
        )

    def status(self, *, deep: bool = False) -> StatusReport:
        self._enter("status", deep=deep)
        return StatusReport(
            agent_id="main",
            workspace="/ws",
            store_path="/state/agents/main/memory.db",
            provider="local",
            requested_provider="auto",
            model="multilingual-e5-small",
            provider_reason="no remote API key",
            fallback_from=None,
            fallback_reason=None,
            search_mode="hybrid",
            sources=("memory", "sessions"),
            extra_paths=("../notes",),
            files=3,
            chunks=9,
            by_source=[
                SourceStatus("memory", 2, 7, files_on_disk=2),
                SourceStatus("sessions", 1, 2),
            ],
            dirty=deep,
            vector_available=True,
            vector_error=None,
            vector_dims=384,
            fts_available=True,
            cache_entries=9,
            cache_max_entries=None,
            events_position=3,
            events_pending=0,
            embed_failures=1,
            readonly_recovery=RecoveryStats(attempts=1, successes=1, last_error="readonly"),
            issues=[SourceIssue("memory/x.bin", "not a text file")],
            last_sync=SyncReport(
                reason="startup",
                full_reindex=False,
                files_indexed=3,
                files_removed=0,
                files_unchanged=0,
                chunks_embedded=9,
                vectors_backfilled=0,
                events_handled=3,
                duration_ms=100.0,
                warnings=("embedding provider openai failed (HTTP 500); keyword-only",),
            ),
            # Only on a deep report: the unset case must stay empty / None over the wire.
            last_synced_at="2026-12-03T15:00:00+00:00" if deep else None,
            last_sync_reason="startup" if deep else None,
            read_only="attempt to write a readonly database" if deep else None,
            warnings=(
                ("embedding provider openai failed when last used (HTTP 500)", "second line")
                if deep
                else ()
            ),
            vectors=VectorProgress(done=3, total=9) if deep else None,
        )

    def recent_events(self, limit: int = 50) -> list[RecordedEvent]:
        self._enter("recent_events", limit=limit)
        with self._lock:
            return self._events[-limit:]

    def subscribe(self, callback: Callable[[RecordedEvent], None]) -> Callable[[], None]:
        self._enter("subscribe")
        with self._lock:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    def close(self) -> None:
        self._enter("close")

    # -- test controls --

    def append(self, event: Event) -> RecordedEvent:
        """Append `event` and notify the subscribers, as the real event log does."""
        with self._lock:
            recorded = RecordedEvent(self._events[-1].position + 1, event)
            self._events.append(recorded)
            subscribers = list(self._subscribers)
        for callback in subscribers:
            callback(recorded)
        return recorded

    @property
    def subscribers(self) -> int:
        with self._lock:
            return len(self._subscribers)


@dataclass
class Served:
    client: MemlaneClient
    port: int
    manager: ServedManager


@contextmanager
def serve(manager: ServedManager, **options: object) -> Iterator[Served]:
    token = options.get("token", TOKEN)
    server, port = build_server(manager, **options)  # type: ignore[arg-type]
    server.start()
    client = MemlaneClient(
        f"127.0.0.1:{port}", token=token if isinstance(token, str) else None, timeout=10.0
    )
    try:
        yield Served(client, port, manager)
    finally:
        client.close()
        server.stop(None).wait(5)


@pytest.fixture
def canned() -> CannedManager:
    return CannedManager()


@pytest.fixture
def manager(canned: CannedManager) -> ServedManager:
    """The manager behind `served`: override this fixture to run against the real one."""
    return canned


@pytest.fixture
def served(manager: ServedManager) -> Iterator[Served]:
    with serve(manager, token=TOKEN) as s:
        yield s


@pytest.fixture
def canned_served(canned: CannedManager) -> Iterator[Served]:
    with serve(canned, token=TOKEN) as s:
        yield s


def eventually(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def rpc_error(call: Callable[[], object]) -> MemlaneRpcError:
    with pytest.raises(MemlaneRpcError) as caught:
        call()
    return caught.value


class TestSearch:
    def test_returns_what_the_manager_returns(self, served: Served) -> None:
        """Results, provider, model, mode and warnings survive the wire unchanged."""
        got = served.client.search("when do we deploy", max_results=5, min_score=0.1)

        assert got == served.manager.search("when do we deploy", max_results=5, min_score=0.1)

    def test_explain_carries_each_score(self, served: Served) -> None:
        """Vector, text, decay and MMR rank arrive, and unset scores stay None."""
        got = served.client.search("deploy", explain=True)

        expected = served.manager.search("deploy", explain=True)
        assert [r.explanation for r in got.results] == [r.explanation for r in expected.results]
        assert all(r.explanation is not None for r in got.results)

    def test_passes_options_and_leaves_unset_limits_to_the_config(
        self, canned_served: Served, canned: CannedManager
    ) -> None:
        """Unset limits reach the manager as None (the configured values), not as zero."""
        canned_served.client.search("部署 周五", session_key="agent:main:chat-1")
        canned_served.client.search("x", max_results=1, min_score=0.0, explain=True)

        assert canned.calls == [
            (
                "search",
                {
                    "query": "部署 周五",
                    "max_results": None,
                    "min_score": None,
                    "explain": False,
                    "session_key": "agent:main:chat-1",
                },
            ),
            (
                "search",
                {
                    "query": "x",
                    "max_results": 1,
                    "min_score": 0.0,
                    "explain": True,
                    "session_key": None,
                },
            ),
        ]

    def test_an_empty_query_is_an_invalid_argument(self, served: Served) -> None:
        error = rpc_error(lambda: served.client.search("   "))

        assert error.code is CODE.INVALID_ARGUMENT

    def test_time_window_and_each_hits_time_cross_the_wire(
        self, canned_served: Served, canned: CannedManager
    ) -> None:
        """since / until / as_of reach the manager; every hit's time, its time boost and the
        time words come back as the manager made them."""
        got = canned_served.client.search(
            "deploy yesterday", explain=True, since="2026-01-01", until="7d", as_of="2026-11-20"
        )

        expected = canned.search("deploy yesterday", explain=True)
        assert got == expected
        assert [r.time for r in got.results] == [
            "2026-01-05T09:30:00Z",
            "2026-01-05T00:00:00Z/2026-01-05T23:59:59Z",
        ]
        assert [r.explanation.time_boost for r in got.results if r.explanation] == [0.625, 1.0]
        assert got.time_words == '"yesterday" → 2026-11-19'
        assert canned.calls[0][1] == {
            "query": "deploy yesterday",
            "max_results": None,
            "min_score": None,
            "explain": True,
            "session_key": None,
            "since": "2026-01-01",
            "until": "7d",
            "as_of": "2026-11-20",
        }

    def test_an_unreadable_since_is_an_invalid_argument(self, served: Served) -> None:
        error = rpc_error(lambda: served.client.search("deploy", since="last tuesday"))

        assert error.code is CODE.INVALID_ARGUMENT
        assert "since" in error.details


class TestGet:
    def test_returns_the_requested_lines(self, served: Served) -> None:
        """A window of lines, CJK text included, as the manager reads it."""
        got = served.client.get("memory/2026-01-05.md", from_line=2, lines=1)

        assert got == served.manager.get("memory/2026-01-05.md", from_line=2, lines=1)

    def test_reads_the_whole_file_without_a_window(self, served: Served) -> None:
        assert served.client.get("MEMORY.md") == served.manager.get("MEMORY.md")

    @pytest.mark.parametrize("path", ["../secrets.txt", "/etc/passwd", "memory/../../x.md"])
    def test_refuses_paths_outside_memory_and_sessions(self, served: Served, path: str) -> None:
        """Traversal and absolute paths are PERMISSION_DENIED."""
        error = rpc_error(lambda: served.client.get(path))

        assert error.code is CODE.PERMISSION_DENIED

    def test_a_missing_file_is_not_found(self, served: Served) -> None:
        error = rpc_error(lambda: served.client.get("memory/1999-01-01.md"))

        assert error.code is CODE.NOT_FOUND


class TestSync:
    def test_returns_the_sync_report(self, canned_served: Served, canned: CannedManager) -> None:
        """Force and the named trigger are passed through; the report arrives whole."""
        got = canned_served.client.sync(force=True, reason="watch")

        assert got == canned.sync(force=True, trigger=SyncTrigger.WATCH)
        assert canned.calls[0] == (
            "sync",
            {"force": True, "trigger": SyncTrigger.WATCH, "wait_for_vectors": True},
        )
        assert got.vectors == VectorProgress(done=9, total=9)

    def test_an_unknown_reason_is_an_invalid_argument(
        self, canned_served: Served, canned: CannedManager
    ) -> None:
        """A free-text reason would switch behaviour unchecked: it is refused, nothing runs."""
        error = rpc_error(lambda: canned_served.client.sync(reason="grpc test"))

        assert error.code is CODE.INVALID_ARGUMENT
        assert "unknown sync trigger 'grpc test'" in error.details
        assert canned.calls == []

    def test_without_a_reason_the_manager_default_applies(
        self, canned_served: Served, canned: CannedManager
    ) -> None:
        canned_served.client.sync()

        assert canned.calls == [
            ("sync", {"force": False, "trigger": SyncTrigger.EXPLICIT, "wait_for_vectors": True})
        ]

    def test_not_waiting_for_vectors_reaches_the_manager_and_the_reply_says_how_far(
        self, canned_served: Served, canned: CannedManager
    ) -> None:
        got = canned_served.client.sync(wait_for_vectors=False)

        assert canned.calls == [
            ("sync", {"force": False, "trigger": SyncTrigger.EXPLICIT, "wait_for_vectors": False})
        ]
        assert got.vectors == VectorProgress(done=4, total=9)

    def test_a_request_without_the_field_waits_as_before_it_existed(
        self, canned_served: Served, canned: CannedManager
    ) -> None:
        """An older client's request (the field unset) keeps today's behaviour: wait."""
        stub = memlane_pb2_grpc.MemoryServiceStub(canned_served.client.channel)
        request = memlane_pb2.SyncRequest(force=False)
        metadata = (("authorization", f"Bearer {TOKEN}"),)

        reply = stub.Sync(request, metadata=metadata, timeout=5)

        assert not request.HasField("wait_for_vectors")
        assert canned.calls[0][1]["wait_for_vectors"] is True
        assert (reply.vectors.done, reply.vectors.total) == (9, 9)


class TestStatus:
    def test_returns_the_status_report(self, canned_served: Served, canned: CannedManager) -> None:
        """Every field, including None, nested counts, issues and the last sync."""
        got = canned_served.client.status(deep=True)

        assert got == canned.status(deep=True)

    def test_unset_optional_numbers_stay_none(
        self, canned_served: Served, canned: CannedManager
    ) -> None:
        got = canned_served.client.status()

        assert got.cache_max_entries is None
        assert got.by_source[1].files_on_disk is None
        assert got.fallback_from is None
        assert got.warnings == () and got.read_only is None and got.last_synced_at is None
        assert got.vectors is None  # a keyword-only index

    def test_vector_progress_arrives_for_polling(
        self, canned_served: Served, canned: CannedManager
    ) -> None:
        got = canned_served.client.status(deep=True)

        assert got.vectors == VectorProgress(done=3, total=9)
        assert got.last_sync is not None and got.last_sync.vectors is None


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


ERRORS: list[tuple[Exception, grpc.StatusCode]] = [
    (InvalidQuery("maxResults must be positive"), CODE.INVALID_ARGUMENT),
    (ConfigError("memorySearch.query.minScore", "must be in [0, 1]"), CODE.INVALID_ARGUMENT),
    (FileRefused("../x", "outside the workspace"), CODE.PERMISSION_DENIED),
    (FileMissing("memory/gone.md", "no such file"), CODE.NOT_FOUND),
    (EmbeddingUnavailable("429 rate limited"), CODE.UNAVAILABLE),
    (EmbeddingTimeout("no answer in 60 s"), CODE.DEADLINE_EXCEEDED),
    (EmbeddingRejected("401 bad key"), CODE.FAILED_PRECONDITION),
    (ProviderNotConfigured("no OPENAI_API_KEY"), CODE.FAILED_PRECONDITION),
    (StoreError("database disk image is malformed"), CODE.INTERNAL),
    (MassDeletion([Removal("memory", 5, 5)], limit=20.0, workspace="/ws"), CODE.FAILED_PRECONDITION),
    (RuntimeError("boom"), CODE.INTERNAL),
]


class TestErrorMapping:
    @pytest.mark.parametrize(("exc", "code"), ERRORS, ids=[type(e).__name__ for e, _ in ERRORS])
    def test_each_error_maps_to_its_status(
        self, canned_served: Served, canned: CannedManager, exc: Exception, code: grpc.StatusCode
    ) -> None:
        canned.fail_with = exc

        error = rpc_error(lambda: canned_served.client.search("q"))

        assert error.code is code

    @pytest.mark.parametrize("rpc", ["search", "get", "sync", "status", "events"])
    def test_every_rpc_uses_the_table(
        self, canned_served: Served, canned: CannedManager, rpc: str
    ) -> None:
        canned.fail_with = EmbeddingUnavailable("503")
        client = canned_served.client
        calls: dict[str, Callable[[], object]] = {
            "search": lambda: client.search("q"),
            "get": lambda: client.get("MEMORY.md"),
            "sync": client.sync,
            "status": client.status,
            "events": lambda: next(client.events(tail=1, timeout=10)),
        }

        error = rpc_error(calls[rpc])

        assert error.code is CODE.UNAVAILABLE
        assert error.request_id

    def test_mapped_errors_explain_themselves(
        self, canned_served: Served, canned: CannedManager
    ) -> None:
        canned.fail_with = ConfigError("memorySearch.query.minScore", "must be in [0, 1]")

        error = rpc_error(lambda: canned_served.client.search("q"))

        assert "memorySearch.query.minScore" in error.details

    def test_an_unexpected_error_is_hidden_and_logged_once(
        self, canned_served: Served, canned: CannedManager
    ) -> None:
        """The client sees only the request id; the server logs the error once, with that id."""
        canned.fail_with = RuntimeError("internal detail /home/me/secret")

        with structlog.testing.capture_logs() as logs:
            error = rpc_error(lambda: canned_served.client.search("q"))

        errors = [e for e in logs if e["log_level"] == "error"]
        assert "secret" not in error.details
        assert error.request_id is not None
        assert error.request_id in error.details
        assert len(errors) == 1
        assert errors[0]["request_id"] == error.request_id
        assert errors[0]["rpc"] == "Search"


class TestFailureLogsKeepNoSecrets:
    """Issue #32 items 5 and 6: an internal failure logs its kind and a redacted summary (no
    request fields, no traceback locals); a mapped error's text masks URL passwords."""

    KEY = "sk-proj-" + "Hy7Gt5Rf3Ed1Ws9Qa2Zx4Cv6Bn8Mk0Lp"
    URL = "postgresql://app:Pw-do-not-log-42@db.internal/prod"

    def test_an_internal_error_carrying_a_secret_leaves_none_in_the_logs(
        self, canned_served: Served, canned: CannedManager, capsys: pytest.CaptureFixture[str]
    ) -> None:
        configure_logging(json=True, level="info")  # to the stderr capsys captures in the test
        canned.fail_with = RuntimeError(f"driver echoed OPENAI_API_KEY={self.KEY} at {self.URL}")

        error = rpc_error(lambda: canned_served.client.search(f"find {self.KEY}"))

        assert error.code is CODE.INTERNAL
        logs = capsys.readouterr().err
        assert self.KEY not in logs and "Pw-do-not-log-42" not in logs
        [record] = [json.loads(ln) for ln in logs.splitlines() if '"error"' in ln]
        assert record["error"] == "RuntimeError" and record["code"] == "INTERNAL"
        assert "db.internal/prod" in record["summary"]
        assert all("locals" not in f for f in record["exception"][0]["frames"])

    def test_a_mapped_error_masks_a_url_password_for_the_client(
        self, canned_served: Served, canned: CannedManager
    ) -> None:
        canned.fail_with = StoreError(f"cannot reach {self.URL}")

        error = rpc_error(lambda: canned_served.client.search("q"))

        assert "postgresql://app:***@db.internal/prod" in error.details
        assert "Pw-do-not-log-42" not in error.details


class TestLogging:
    def test_one_line_per_call_with_duration_and_no_query_or_text(
        self, canned_served: Served
    ) -> None:
        with structlog.testing.capture_logs() as logs:
            canned_served.client.search("needle-query-42")
            canned_served.client.get("MEMORY.md")

        handled = [e for e in logs if e["event"] == "rpc.handled"]
        assert [(e["rpc"], e["code"]) for e in handled] == [("Search", "OK"), ("Get", "OK")]
        assert all(isinstance(e["duration_ms"], float) for e in handled)
        assert len({e["request_id"] for e in handled}) == 2
        dumped = repr(logs)
        assert "needle-query-42" not in dumped
        assert "Fridays" not in dumped

    def test_a_failed_login_does_not_log_the_token(self, canned: CannedManager) -> None:
        with serve(canned, token=TOKEN) as s, structlog.testing.capture_logs() as logs:
            intruder = MemlaneClient(f"127.0.0.1:{s.port}", token="guess-" + TOKEN)
            rpc_error(intruder.status)
            intruder.close()

        assert [e["event"] for e in logs] == ["rpc.unauthenticated"]
        assert TOKEN not in repr(logs)


class TestAuth:
    @pytest.mark.parametrize("token", [None, "wrong", TOKEN + "x", ""])
    def test_missing_or_wrong_token_is_unauthenticated(
        self, canned_served: Served, canned: CannedManager, token: str | None
    ) -> None:
        with MemlaneClient(f"127.0.0.1:{canned_served.port}", token=token) as client:
            error = rpc_error(lambda: client.search("q"))

        assert error.code is CODE.UNAUTHENTICATED
        assert canned.calls == []

    def test_the_event_stream_needs_the_token_too(self, canned_served: Served) -> None:
        with MemlaneClient(f"127.0.0.1:{canned_served.port}") as client:
            error = rpc_error(lambda: next(client.events(tail=1, timeout=10)))

        assert error.code is CODE.UNAUTHENTICATED

    def test_the_scheme_is_case_insensitive(self, canned_served: Served) -> None:
        stub = memlane_pb2_grpc.MemoryServiceStub(canned_served.client.channel)
        metadata = (("authorization", f"bearer {TOKEN}"),)

        reply = stub.Status(memlane_pb2.StatusRequest(), metadata=metadata, timeout=5)

        assert reply.agent_id == "main"

    def test_without_a_configured_token_calls_need_none(self, canned: CannedManager) -> None:
        with serve(canned, token=None) as s:
            assert s.client.status().agent_id == "main"

    def test_an_empty_token_is_refused_at_build_time(self, canned: CannedManager) -> None:
        with pytest.raises(ValueError, match="token"):
            build_server(canned, token="")


class TestHealthAndReflection:
    @pytest.mark.parametrize("service", ["", SERVICE_NAME])
    def test_health_is_serving_without_a_token(self, canned_served: Served, service: str) -> None:
        """Health checks stay open so probes need no secret."""
        with grpc.insecure_channel(f"127.0.0.1:{canned_served.port}") as channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=service), timeout=5
            )

        assert reply.status == health_pb2.HealthCheckResponse.SERVING

    def test_reflection_lists_the_service(self, canned_served: Served) -> None:
        reply = _list_services(canned_served.port, metadata=(("authorization", f"Bearer {TOKEN}"),))

        assert SERVICE_NAME in reply
        assert "grpc.health.v1.Health" in reply

    def test_reflection_needs_the_token(self, canned_served: Served) -> None:
        with pytest.raises(grpc.RpcError) as caught:
            _list_services(canned_served.port, metadata=())

        assert caught.value.code() is CODE.UNAUTHENTICATED


def _list_services(port: int, *, metadata: tuple[tuple[str, str], ...]) -> list[str]:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        replies = stub.ServerReflectionInfo(iter([request]), metadata=metadata, timeout=5)
        return [s.name for r in replies for s in r.list_services_response.service]


class TestBuildServer:
    def test_a_port_in_use_is_an_os_error(self, canned: CannedManager) -> None:
        """No silent port sharing (SO_REUSEPORT is off)."""
        with serve(canned) as s, pytest.raises(OSError, match="cannot listen"):
            build_server(canned, port=s.port)


def _self_signed(directory: Path) -> TlsConfig:
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    return TlsConfig(cert_file=cert, key_file=key)


@pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl CLI to make a certificate")
class TestTls:
    def test_a_client_trusting_the_certificate_talks_tls(
        self, canned: CannedManager, tmp_path: Path
    ) -> None:
        tls = _self_signed(tmp_path)

        with serve(canned, token=TOKEN, tls=tls) as s:
            client = MemlaneClient(f"127.0.0.1:{s.port}", token=TOKEN, root_cert=tls.cert_file)
            got = client.search("deploy")
            pem_client = MemlaneClient(
                f"localhost:{s.port}", token=TOKEN, root_cert=Path(tls.cert_file).read_bytes()
            )
            status = pem_client.status()
            client.close()
            pem_client.close()

        assert got == canned.search("deploy")
        assert status.agent_id == "main"

    def test_a_plaintext_client_cannot_talk_to_a_tls_server(
        self, canned: CannedManager, tmp_path: Path
    ) -> None:
        with serve(canned, token=TOKEN, tls=_self_signed(tmp_path)) as s:
            plain = MemlaneClient(f"127.0.0.1:{s.port}", token=TOKEN, timeout=5)
            error = rpc_error(plain.status)
            plain.close()

        assert error.code is CODE.UNAVAILABLE
        assert canned.calls == []
