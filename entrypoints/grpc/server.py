"""Entry point: the gRPC server's start-up: listener, TLS, bearer-token auth, health, reflection.

Authentication: with a token, every call must carry `authorization: Bearer <token>` metadata
(compared in constant time) or fails with UNAUTHENTICATED. Health checks (`grpc.health.v1.Health`)
stay open so that load balancers and `grpc_health_probe` work without the secret; they reveal only
SERVING / NOT_SERVING. Reflection requires the token like the service itself.

What each call does, its error table and its log line live in `servicer.py`.
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Final, NoReturn

import grpc
import structlog
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from memlane.entrypoints.grpc._generated import memlane_pb2_grpc as pb_grpc
from memlane.entrypoints.grpc.servicer import (
    REQUEST_ID_KEY,
    SERVICE_NAME,
    MemoryServicer,
    ServedManager,
    request_id_of,
)
from memlane.entrypoints.listen import is_loopback

OPEN_METHOD_PREFIXES: Final = ("/grpc.health.v1.Health/",)

_log = structlog.get_logger("memlane.grpc")


@dataclass(frozen=True, slots=True)
class TlsConfig:
    """PEM files for a TLS listener; with `client_ca_file`, clients must present a certificate."""

    cert_file: str | os.PathLike[str]
    key_file: str | os.PathLike[str]
    client_ca_file: str | os.PathLike[str] | None = None


# ---- authentication ----


class BearerTokenAuth(grpc.ServerInterceptor):  # type: ignore[type-arg]
    """Rejects calls without `authorization: Bearer <token>` (constant-time compare).

    Methods under `open_prefixes` (health checks by default) pass without a token.
    """

    def __init__(self, token: str, *, open_prefixes: Sequence[str] = OPEN_METHOD_PREFIXES) -> None:
        if not token:
            raise ValueError("the bearer token must not be empty")
        self._token = token.encode()
        self._open = tuple(open_prefixes)

    def authorized(self, metadata: Sequence[tuple[str, str | bytes]] | None) -> bool:
        """Return whether `metadata` carries the expected bearer token."""
        for key, value in metadata or ():
            if key != "authorization" or not isinstance(value, str):
                continue
            scheme, _, credential = value.partition(" ")
            if scheme.lower() == "bearer" and hmac.compare_digest(
                credential.strip().encode(), self._token
            ):
                return True
        return False

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], grpc.RpcMethodHandler | None],  # type: ignore[type-arg]
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:  # type: ignore[type-arg]
        handler = continuation(handler_call_details)
        method = handler_call_details.method
        if handler is None or method.startswith(self._open):
            return handler
        if self.authorized(handler_call_details.invocation_metadata):
            return handler
        request_id = request_id_of(handler_call_details.invocation_metadata)
        _log.warning("rpc.unauthenticated", method=method, request_id=request_id)
        return _deny(handler, request_id)


def _deny(handler: grpc.RpcMethodHandler, request_id: str) -> grpc.RpcMethodHandler:  # type: ignore[type-arg]
    """A handler of the same shape as `handler` that fails with UNAUTHENTICATED, carrying the
    request id as every other answer does."""

    def reject(_request: object, context: grpc.ServicerContext) -> NoReturn:
        context.send_initial_metadata(((REQUEST_ID_KEY, request_id),))
        context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or invalid bearer token")

    deserializer = handler.request_deserializer
    serializer = handler.response_serializer
    if handler.request_streaming and handler.response_streaming:
        return grpc.stream_stream_rpc_method_handler(reject, deserializer, serializer)
    if handler.request_streaming:
        return grpc.stream_unary_rpc_method_handler(reject, deserializer, serializer)
    if handler.response_streaming:
        return grpc.unary_stream_rpc_method_handler(reject, deserializer, serializer)
    return grpc.unary_unary_rpc_method_handler(reject, deserializer, serializer)


# ---- assembly ----


def build_server(
    manager: ServedManager,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    token: str | None = None,
    tls: TlsConfig | None = None,
    max_workers: int = 16,
) -> tuple[grpc.Server, int]:
    """Build a MemoryService server bound to `host:port` (0: a free port); not yet started.

    Returns the server and the port actually bound; the caller runs `server.start()` and later
    `server.stop(grace)`. Each event stream holds a worker thread: at most `max_workers // 2`
    streams are served at once, so unary calls always find a thread. Start the manager's
    background work too (`manager.start()`, as `memlane serve` does): a `Sync` that does not wait
    for its vectors leaves them to it (else to the next sync that waits).

    Raises OSError when the address cannot be bound, ValueError for an empty token.
    """
    interceptors: list[grpc.ServerInterceptor] = []  # type: ignore[type-arg]
    if token is not None:
        interceptors.append(BearerTokenAuth(token))
    server = grpc.server(
        ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="memlane-grpc"),
        interceptors=interceptors,
        # Without this, Linux lets a second server silently share a port already in use.
        options=[("grpc.so_reuseport", 0)],
    )
    pb_grpc.add_MemoryServiceServicer_to_server(
        MemoryServicer(manager, max_streams=max(1, max_workers // 2)), server
    )
    health_servicer = health.HealthServicer()
    health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    health_servicer.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )

    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        if tls is None:
            bound = server.add_insecure_port(address)
        else:
            bound = server.add_secure_port(address, _server_credentials(tls))
    except RuntimeError as exc:  # grpcio raises RuntimeError("Failed to bind ...")
        raise OSError(f"cannot listen on {address}: {exc}") from exc
    if bound == 0:  # older grpcio reported bind failures this way
        raise OSError(f"cannot listen on {address}")
    if not is_loopback(host) and tls is None:
        _log.warning("grpc.insecure_listener", host=host, port=bound, with_token=token is not None)
    _log.info("grpc.server_built", host=host, port=bound, tls=tls is not None, auth=bool(token))
    return server, bound


def _server_credentials(tls: TlsConfig) -> grpc.ServerCredentials:
    key = Path(tls.key_file).read_bytes()
    cert = Path(tls.cert_file).read_bytes()
    client_ca = Path(tls.client_ca_file).read_bytes() if tls.client_ca_file is not None else None
    return grpc.ssl_server_credentials(
        [(key, cert)], root_certificates=client_ca, require_client_auth=client_ca is not None
    )
