"""Helpers of the gRPC tests: `CannedManager`, a real server on 127.0.0.1 (random port) with the
real client, and the fixtures that serve either.

The server is driven by `CannedManager`, a hand-written stand-in for the memory manager with
canned data (a double of the driving side). Tests that take the `served` fixture use only what any
manager offers (the results of the same call made directly), so overriding the `manager` fixture
runs them against the real manager; tests that need to inject errors or append events take
`canned_served`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import grpc
import pytest

from memlane.application.ports.event_log import RecordedEvent
from memlane.application.ports.file_source import FileMissing, FileRefused
from memlane.application.ports.index_store import VectorProgress
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
from memlane.domain.errors import InvalidQuery
from memlane.domain.events import Event, FileChanged, FileIndexed, FileRemoved
from memlane.domain.search import ScoreExplanation, SearchResult
from memlane.domain.sources import SourceIssue
from memlane.domain.time_bounds import parse_time_bound
from memlane.entrypoints.grpc.client import MemlaneClient, MemlaneRpcError
from memlane.entrypoints.grpc.server import build_server
from memlane.entrypoints.grpc.servicer import ServedManager

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
                explanation=ScoreExplanation(0.75, None, 0.8125, 0.5, 1, 0.625, best_piece=0.875)
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
