"""Entry point: a small typed client for the memlane gRPC MemoryService.

Returns the same values the manager returns (`SearchResponse`, `GetResult`, `SyncReport`,
`StatusReport`) and `StreamedEvent`s for the event stream. Every failure is a `MemlaneRpcError`
carrying the gRPC status code, the server's message and its request id; a number the request
message cannot carry (`from_line` past the int32 range) is refused before any call with
`MemlaneRequestRefused`, both a MemlaneRpcError (INVALID_ARGUMENT) and the InvalidQuery the
other faces raise.

    with MemlaneClient("127.0.0.1:50051", token="s3cret") as client:
        for hit in client.search("what did we decide about the API?").results:
            print(hit.score, hit.path, hit.start_line)
"""

from __future__ import annotations

import os
from collections.abc import Generator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Final, Self, cast

import grpc

from memlane.application.reports import GetResult, SearchResponse, StatusReport, SyncReport
from memlane.domain.errors import InvalidQuery
from memlane.entrypoints.grpc._generated import memlane_pb2 as pb
from memlane.entrypoints.grpc._generated import memlane_pb2_grpc as pb_grpc
from memlane.entrypoints.grpc.messages import (
    StreamedEvent,
    get_result_from_pb,
    search_response_from_pb,
    status_report_from_pb,
    streamed_event_from_pb,
    sync_report_from_pb,
)

__all__ = ["MemlaneClient", "MemlaneRequestRefused", "MemlaneRpcError", "StreamedEvent"]

_REQUEST_ID_KEY: Final = "x-request-id"

# The ranges of the request messages' integer fields (memlane.proto).
_INT32: Final = (-(2**31), 2**31 - 1)
_UINT32: Final = (0, 2**32 - 1)
_UINT64: Final = (0, 2**64 - 1)


class MemlaneRpcError(Exception):
    """A call failed: `code` is the gRPC status, `request_id` matches the server's log line."""

    def __init__(self, code: grpc.StatusCode, details: str, request_id: str | None) -> None:
        super().__init__(f"{code.name}: {details}")
        self.code = code
        self.details = details
        self.request_id = request_id


class MemlaneRequestRefused(MemlaneRpcError, InvalidQuery):
    """A request refused before it was sent: a value its message cannot carry. Caught as a
    MemlaneRpcError (INVALID_ARGUMENT, no request id) or as the InvalidQuery of the other faces."""

    def __init__(self, details: str) -> None:
        super().__init__(grpc.StatusCode.INVALID_ARGUMENT, details, None)


def _whole(name: str, value: int | None, bounds: tuple[int, int]) -> int | None:
    """`value` when the message's integer field can carry it (None: unset); else refused."""
    raw: object = value  # callers outside mypy may pass anything
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise MemlaneRequestRefused(f"{name} must be a whole number, not {type(raw).__name__}")
    low, high = bounds
    if not low <= raw <= high:
        raise MemlaneRequestRefused(f"{name} must be between {low} and {high}, not {raw}")
    return raw


def _number(name: str, value: float | None) -> float | None:
    """`value` when a double field can carry it (None: unset; NaN is the server's to judge)."""
    raw: object = value
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise MemlaneRequestRefused(f"{name} must be a number, not {type(raw).__name__}")
    try:
        return float(raw)
    except OverflowError:  # an int past the double range
        raise MemlaneRequestRefused(f"{name} must be a number between 0 and 1") from None


def _translate(error: grpc.RpcError) -> MemlaneRpcError:
    # Errors raised by grpc's calls are also `grpc.Call`s; the stubs cannot express that.
    call = cast(grpc.Call, error)
    request_id = None
    try:
        for key, value in call.initial_metadata() or ():
            if key == _REQUEST_ID_KEY and isinstance(value, str):
                request_id = value
    except grpc.RpcError:  # no initial metadata arrived (connection failures)
        request_id = None
    return MemlaneRpcError(call.code(), call.details() or str(error), request_id)


class MemlaneClient:
    """A connection to a memlane server; thread safe, close it (or use `with`) when done.

    Args:
        target: `host:port` of the server.
        token: the server's bearer token, sent as `authorization` metadata on every call.
        root_cert: PEM bytes, or the path of a PEM file, of the CA (or self-signed certificate)
            to trust; switches the channel to TLS. Without it the channel is plaintext.
        timeout: default deadline in seconds for unary calls (None: no deadline).
    """

    def __init__(
        self,
        target: str,
        *,
        token: str | None = None,
        root_cert: bytes | str | os.PathLike[str] | None = None,
        timeout: float | None = 60.0,
    ) -> None:
        if root_cert is None:
            self._channel = grpc.insecure_channel(target)
        else:
            pem = root_cert if isinstance(root_cert, bytes) else Path(root_cert).read_bytes()
            self._channel = grpc.secure_channel(
                target, grpc.ssl_channel_credentials(root_certificates=pem)
            )
        self._stub = pb_grpc.MemoryServiceStub(self._channel)
        self._metadata: tuple[tuple[str, str], ...] = (
            (("authorization", f"Bearer {token}"),) if token is not None else ()
        )
        self._timeout = timeout

    @property
    def channel(self) -> grpc.Channel:
        """The underlying channel (health checks, reflection)."""
        return self._channel

    def wait_ready(self, timeout: float = 10.0) -> None:
        """Block until the channel connects; raise MemlaneRpcError(UNAVAILABLE) after `timeout`."""
        try:
            grpc.channel_ready_future(self._channel).result(timeout=timeout)
        except grpc.FutureTimeoutError as exc:
            raise MemlaneRpcError(
                grpc.StatusCode.UNAVAILABLE, f"not ready after {timeout}s", None
            ) from exc

    def search(
        self,
        query: str,
        *,
        max_results: int | None = None,
        min_score: float | None = None,
        explain: bool = False,
        session_key: str | None = None,
        agents: Sequence[str] = (),
        since: str | None = None,
        until: str | None = None,
        as_of: str | None = None,
    ) -> SearchResponse:
        """Search the memory index; `agents` searches those agents' memories in one ranking;
        `since` / `until` / `as_of` as in MemoryManager.search (strings: ISO 8601 or `7d`)."""
        request = pb.SearchRequest(
            query=query,
            max_results=_whole("max_results", max_results, _INT32),
            min_score=_number("min_score", min_score),
            explain=explain,
            session_key=session_key,
            agents=list(agents),
            since=since,
            until=until,
            as_of=as_of,
        )
        try:
            reply = self._stub.Search(request, timeout=self._timeout, metadata=self._metadata)
        except grpc.RpcError as exc:
            raise _translate(exc) from None
        return search_response_from_pb(reply)

    def get(
        self,
        path: str,
        *,
        from_line: int | None = None,
        lines: int | None = None,
        agent: str | None = None,
    ) -> GetResult:
        """Read lines of a memory file or transcript (of another agent of the store: `agent`)."""
        request = pb.GetRequest(
            path=path,
            from_line=_whole("from_line", from_line, _INT32),
            lines=_whole("lines", lines, _INT32),
            agent=agent,
        )
        try:
            reply = self._stub.Get(request, timeout=self._timeout, metadata=self._metadata)
        except grpc.RpcError as exc:
            raise _translate(exc) from None
        return get_result_from_pb(reply)

    def sync(
        self,
        *,
        force: bool = False,
        reason: str | None = None,
        timeout: float | None = None,
        wait_for_vectors: bool = True,
    ) -> SyncReport:
        """Sync the index now; `timeout` overrides the default deadline (a reindex takes long).

        With `wait_for_vectors=False` the call returns once the keyword rows are committed and
        the server embeds the missing vectors in the background: the report's `vectors` says
        how far they were, `status().vectors` how far they are.
        """
        # The field stays unset for the default, so the request is what older clients send.
        request = pb.SyncRequest(
            force=force, reason=reason, wait_for_vectors=None if wait_for_vectors else False
        )
        try:
            reply = self._stub.Sync(
                request,
                timeout=self._timeout if timeout is None else timeout,
                metadata=self._metadata,
            )
        except grpc.RpcError as exc:
            raise _translate(exc) from None
        return sync_report_from_pb(reply)

    def status(self, *, deep: bool = False) -> StatusReport:
        """Return the index status."""
        try:
            reply = self._stub.Status(
                pb.StatusRequest(deep=deep), timeout=self._timeout, metadata=self._metadata
            )
        except grpc.RpcError as exc:
            raise _translate(exc) from None
        return status_report_from_pb(reply)

    def events(
        self,
        *,
        tail: int = 0,
        after_position: int | None = None,
        types: Sequence[str] = (),
        timeout: float | None = None,
    ) -> Generator[StreamedEvent, None, None]:
        """Yield index events as they are appended, after replaying the newest `tail` ones.

        The stream runs until `timeout` (None: forever), the server stops, or the caller stops
        iterating (leaving the loop or closing the iterator cancels the call). A `tail` or
        `after_position` the request cannot carry is refused here, before the stream starts.
        """
        request = pb.WatchEventsRequest(
            tail=_whole("tail", tail, _UINT32) or 0,
            after_position=_whole("after_position", after_position, _UINT64),
            types=types,
        )
        return self._stream(request, timeout)

    def _stream(
        self, request: pb.WatchEventsRequest, timeout: float | None
    ) -> Generator[StreamedEvent, None, None]:
        call = self._stub.WatchEvents(request, timeout=timeout, metadata=self._metadata)
        try:
            for message in call:
                yield streamed_event_from_pb(message)
        except grpc.RpcError as exc:
            error = _translate(exc)
            if error.code is grpc.StatusCode.CANCELLED:
                return
            raise error from None
        finally:
            call.cancel()  # type: ignore[no-untyped-call]

    def close(self) -> None:
        """Close the channel; calls in flight are cancelled."""
        self._channel.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
