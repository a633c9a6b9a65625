"""Entry point: the gRPC MemoryService servicer (proto <-> memory manager) and its error table.

Errors reach clients through the one error table of every face, `entrypoints/errors.py`: its
row's status code, the error's message as details; an unexpected error is INTERNAL with its
details hidden and logged once with its traceback. The server's own limits (too many event
streams, a slow reader) are RESOURCE_EXHAUSTED (`ServerLimitError`).

Logging: one `rpc.handled` line per call with `rpc`, `request_id`, `code` and `duration_ms`; never a
query, a snippet, file text or a token. The request id comes from the caller's `x-request-id`
metadata when it is sane, else it is generated, and is sent back as initial metadata.

Listener, TLS, authentication, health and reflection are assembled in `server.py`.
"""

from __future__ import annotations

import queue
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from functools import partial
from typing import Final, NoReturn, Protocol, TypeVar

import grpc
import structlog

from memlane.application.ports.event_log import RecordedEvent
from memlane.application.reports import (
    GetResult,
    SearchResponse,
    StatusReport,
    SyncProgress,
    SyncReport,
)
from memlane.application.sync_trigger import SyncTrigger
from memlane.domain.errors import InvalidQuery
from memlane.domain.events import EVENT_TYPES, type_name
from memlane.entrypoints.errors import kind_of, message
from memlane.entrypoints.grpc._generated import memlane_pb2 as pb
from memlane.entrypoints.grpc._generated import memlane_pb2_grpc as pb_grpc
from memlane.entrypoints.grpc.messages import (
    get_result_to_pb,
    index_event_to_pb,
    search_response_to_pb,
    status_report_to_pb,
    sync_report_to_pb,
)
from memlane.entrypoints.logging import redacted_summary

SERVICE_NAME: Final = pb.DESCRIPTOR.services_by_name["MemoryService"].full_name
REQUEST_ID_KEY: Final = "x-request-id"
MAX_EVENT_BACKLOG: Final = 10_000  # events queued for one slow watcher before it is dropped
_REPLAY_WINDOW: Final = 1000  # how far back `after_position` can resume
_WAKE: Final = object()
# Status details travel in HTTP/2 trailers, which gRPC caps (8 KiB soft, 16 KiB hard): an error
# echoing a long bad value (a path, an agent id) arrived as RESOURCE_EXHAUSTED instead of itself.
MAX_DETAILS: Final = 2_000
_SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")


class ServerLimitError(Exception):
    """The server's own limits (concurrent event streams, a slow watcher's backlog) were hit."""


_log = structlog.get_logger("memlane.grpc")
T = TypeVar("T")


class ServedManager(Protocol):
    """What the server needs from the memory manager (`memlane.application.memory`).

    `subscribe` calls its callback from whichever thread appends events and returns a function
    that unsubscribes; the callback must not block, so the server only queues what it receives.
    """

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
    ) -> SearchResponse: ...

    def get(
        self,
        path: str,
        *,
        from_line: int | None = None,
        lines: int | None = None,
        agent: str | None = None,
    ) -> GetResult: ...

    def sync(
        self,
        *,
        force: bool = False,
        trigger: SyncTrigger = SyncTrigger.EXPLICIT,
        progress: Callable[[SyncProgress], None] | None = None,
        wait_for_vectors: bool = True,
    ) -> SyncReport: ...

    def status(self, *, deep: bool = False) -> StatusReport: ...

    def recent_events(self, limit: int = 50) -> list[RecordedEvent]: ...

    def subscribe(self, callback: Callable[[RecordedEvent], None]) -> Callable[[], None]: ...


def status_for(exc: BaseException) -> grpc.StatusCode | None:
    """The status code of `exc` (entrypoints/errors.py), or None for an unexpected error."""
    if isinstance(exc, ServerLimitError):
        return grpc.StatusCode.RESOURCE_EXHAUSTED
    kind = kind_of(exc)
    return None if kind is None else grpc.StatusCode[kind.grpc_code]


# ---- one call's bookkeeping ----


def details(text: str) -> str:
    """`text` cut to MAX_DETAILS characters, saying how much was cut."""
    if len(text) <= MAX_DETAILS:
        return text
    keep = MAX_DETAILS - 40
    return f"{text[:keep]}… ({len(text) - keep} characters cut)"


def request_id_of(metadata: Sequence[tuple[str, str | bytes]] | None) -> str:
    """The caller's `x-request-id` when it is sane, else a new one."""
    for key, value in metadata or ():
        if key == REQUEST_ID_KEY and isinstance(value, str) and _SANE_REQUEST_ID.fullmatch(value):
            return value
    return uuid.uuid4().hex[:16]


class _Rpc:
    """Request id, bound logger, timing and error mapping for one call."""

    def __init__(self, name: str, context: grpc.ServicerContext) -> None:
        self.name = name
        self.context = context
        self.request_id = request_id_of(context.invocation_metadata())
        self.log = _log.bind(rpc=name, request_id=self.request_id)
        self._started = time.perf_counter()
        context.send_initial_metadata(((REQUEST_ID_KEY, self.request_id),))

    def bound(self) -> AbstractContextManager[None]:
        """Bind `rpc` and `request_id` for the manager's own log lines during the call."""
        return structlog.contextvars.bound_contextvars(rpc=self.name, request_id=self.request_id)

    def elapsed_ms(self) -> float:
        return round((time.perf_counter() - self._started) * 1000, 3)

    def done(self, *, code: str = "OK", **fields: object) -> None:
        self.log.info("rpc.handled", code=code, duration_ms=self.elapsed_ms(), **fields)

    def fail(self, exc: Exception) -> NoReturn:
        """Log `exc` once and end the call with its mapped status."""
        code = status_for(exc)
        if code is None:
            self.log.error(  # kind and redacted summary; the traceback without locals
                "rpc.handled",
                code=grpc.StatusCode.INTERNAL.name,
                duration_ms=self.elapsed_ms(),
                error=type(exc).__name__,
                summary=redacted_summary(exc),
                exc_info=exc,
            )
            self.context.abort(
                grpc.StatusCode.INTERNAL, f"internal error (request id {self.request_id})"
            )
        level = self.log.error if code is grpc.StatusCode.INTERNAL else self.log.warning
        level(
            "rpc.handled", code=code.name, duration_ms=self.elapsed_ms(), error=type(exc).__name__
        )
        self.context.abort(code, details(message(exc)))

    def run(self, call: Callable[[], T]) -> T:
        """Run `call` with the ids bound; map any exception to a status."""
        try:
            with self.bound():
                return call()
        except Exception as exc:  # every error leaves through the one table
            self.fail(exc)


# ---- the servicer ----


class MemoryServicer(pb_grpc.MemoryServiceServicer):
    """Maps MemoryService calls onto a ServedManager; holds no state besides the watcher count."""

    def __init__(
        self,
        manager: ServedManager,
        *,
        max_streams: int = 8,
        max_backlog: int = MAX_EVENT_BACKLOG,
    ) -> None:
        self._manager = manager
        self._max_streams = max_streams
        self._max_backlog = max_backlog
        self._streams = 0
        self._lock = threading.Lock()

    def Search(  # noqa: N802 - gRPC method names
        self, request: pb.SearchRequest, context: grpc.ServicerContext
    ) -> pb.SearchResponse:
        rpc = _Rpc("Search", context)
        response = rpc.run(
            lambda: search_response_to_pb(
                self._manager.search(
                    request.query,
                    max_results=request.max_results if request.HasField("max_results") else None,
                    min_score=request.min_score if request.HasField("min_score") else None,
                    explain=request.explain,
                    session_key=request.session_key if request.HasField("session_key") else None,
                    agents=list(request.agents) or None,
                    since=request.since if request.HasField("since") else None,
                    until=request.until if request.HasField("until") else None,
                    as_of=request.as_of if request.HasField("as_of") else None,
                )
            )
        )
        rpc.done(results=len(response.results), mode=response.mode)
        return response

    def Get(  # noqa: N802 - gRPC method names
        self, request: pb.GetRequest, context: grpc.ServicerContext
    ) -> pb.GetResponse:
        rpc = _Rpc("Get", context)
        response = rpc.run(
            lambda: get_result_to_pb(
                self._manager.get(
                    request.path,
                    from_line=request.from_line if request.HasField("from_line") else None,
                    lines=request.lines if request.HasField("lines") else None,
                    agent=request.agent if request.HasField("agent") else None,
                )
            )
        )
        rpc.done(source=response.source)
        return response

    def Sync(  # noqa: N802 - gRPC method names
        self, request: pb.SyncRequest, context: grpc.ServicerContext
    ) -> pb.SyncReport:
        rpc = _Rpc("Sync", context)
        trigger = SyncTrigger.EXPLICIT
        if request.HasField("reason"):
            try:
                trigger = SyncTrigger.parse(request.reason)
            except ValueError as exc:  # the trigger switches behaviour: never guess one
                rpc.done(code=grpc.StatusCode.INVALID_ARGUMENT.name)
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, details(str(exc)))
        # Unset means wait: what every client did before the field existed.
        wait = request.wait_for_vectors if request.HasField("wait_for_vectors") else True
        report = rpc.run(
            lambda: self._manager.sync(force=request.force, trigger=trigger, wait_for_vectors=wait)
        )
        response = rpc.run(lambda: sync_report_to_pb(report))
        vectors = report.vectors
        rpc.done(
            full_reindex=report.full_reindex,
            files_indexed=report.files_indexed,
            wait_for_vectors=wait,
            vectors_done=None if vectors is None else vectors.done,
            vectors_total=None if vectors is None else vectors.total,
        )
        return response

    def Status(  # noqa: N802 - gRPC method names
        self, request: pb.StatusRequest, context: grpc.ServicerContext
    ) -> pb.StatusReport:
        rpc = _Rpc("Status", context)
        response = rpc.run(lambda: status_report_to_pb(self._manager.status(deep=request.deep)))
        rpc.done(deep=request.deep)
        return response

    def WatchEvents(  # noqa: N802 - gRPC method names
        self, request: pb.WatchEventsRequest, context: grpc.ServicerContext
    ) -> Iterator[pb.IndexEvent]:
        """Subscribe, then replay: nothing appended in between is lost (dedup by position)."""
        rpc = _Rpc("WatchEvents", context)
        if unknown := sorted(set(request.types) - EVENT_TYPES.keys()):
            # a misspelt type would otherwise keep the stream open and silent forever
            rpc.fail(
                InvalidQuery(
                    f"unknown event type(s): {', '.join(unknown)}; "
                    f"known: {', '.join(sorted(EVENT_TYPES))}"
                )
            )
        if request.tail and request.HasField("after_position"):
            # Two starting points: taking one silently would replay what the caller did not ask.
            rpc.fail(InvalidQuery("give tail or after_position, not both"))
        with self._lock:
            if self._streams >= self._max_streams:
                rpc.fail(ServerLimitError(f"at most {self._max_streams} event streams at once"))
            self._streams += 1
        inbox: queue.SimpleQueue[object] = queue.SimpleQueue()
        overflow = threading.Event()
        wanted = frozenset(request.types)

        def on_event(recorded: RecordedEvent) -> None:
            if overflow.is_set():
                return
            if inbox.qsize() >= self._max_backlog:
                overflow.set()
                inbox.put(_WAKE)
                return
            inbox.put(recorded)

        context.add_callback(lambda: inbox.put(_WAKE))  # the call ended: wake the loop below
        sent = 0
        unsubscribe: Callable[[], None] | None = None
        try:
            unsubscribe = rpc.run(lambda: self._manager.subscribe(on_event))
            last = request.after_position if request.HasField("after_position") else 0
            replayed = rpc.run(lambda: self._replay(request))
            newest = max((r.position for r in replayed), default=0)
            if last > newest:
                # Positions only grow, so a later one is from another or a replaced log; waiting
                # for it would keep the stream open and silent until the log got that far.
                rpc.fail(
                    InvalidQuery(
                        f"after_position {last} is past the end of the event log ({newest}): "
                        "resume from a position this server sent, or ask for a tail"
                    )
                )
            for recorded in replayed:
                if recorded.position > last:
                    last = recorded.position
                    if not wanted or type_name(recorded.event) in wanted:
                        sent += 1
                        yield rpc.run(partial(index_event_to_pb, recorded))
            while True:
                try:
                    item = inbox.get(timeout=1.0)
                except queue.Empty:
                    item = _WAKE
                if item is _WAKE or not isinstance(item, RecordedEvent):
                    if overflow.is_set():
                        rpc.fail(ServerLimitError("the client read too slowly; reconnect"))
                    if not context.is_active():
                        break
                    continue
                if item.position <= last:
                    continue
                last = item.position
                if not wanted or type_name(item.event) in wanted:
                    sent += 1
                    yield rpc.run(partial(index_event_to_pb, item))
        finally:
            if unsubscribe is not None:
                unsubscribe()
            with self._lock:
                self._streams -= 1
        rpc.done(code="OK" if context.is_active() else "CANCELLED", events=sent)

    def _replay(self, request: pb.WatchEventsRequest) -> list[RecordedEvent]:
        if request.HasField("after_position"):
            return self._manager.recent_events(_REPLAY_WINDOW)
        if request.tail:
            return self._manager.recent_events(min(request.tail, _REPLAY_WINDOW))
        return []
