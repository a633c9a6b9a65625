"""Entry point: the MCP server over streamable HTTP: bearer token, open health check, TLS.

Authentication mirrors the gRPC server: with a token, every request must carry
`Authorization: Bearer <token>` (compared in constant time) or gets 401 with
`WWW-Authenticate: Bearer`; `GET /health` stays open and reveals only that the server is up.
On loopback the SDK also checks Host and Origin headers (DNS-rebinding protection). Request
bodies over the SDK's limit get 413 before any parsing.
"""

from __future__ import annotations

import hmac
import ssl
from collections.abc import Callable
from typing import Any, Final

import structlog
import uvicorn
from mcp.server.lowlevel import Server
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from memlane.entrypoints.listen import is_loopback

MCP_PATH: Final = "/mcp"
HEALTH_PATH: Final = "/health"
_log = structlog.get_logger("memlane.mcp")


class BearerTokenGate:
    """ASGI middleware: refuses HTTP requests without the bearer token, except open paths."""

    def __init__(
        self, app: ASGIApp, token: str, *, open_paths: frozenset[str] = frozenset({HEALTH_PATH})
    ) -> None:
        if not token:
            raise ValueError("the bearer token must not be empty")
        self._app = app
        self._token = token.encode()
        self._open = open_paths

    def authorized(self, header: str | None) -> bool:
        """Whether an Authorization header value carries the expected bearer token."""
        if not header:
            return False
        scheme, _, credential = header.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(
            credential.strip().encode(), self._token
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self._open:
            await self._app(scope, receive, send)
            return
        header = Request(scope).headers.get("authorization")
        if self.authorized(header):
            await self._app(scope, receive, send)
            return
        _log.warning("mcp_http_unauthenticated", path=scope["path"])
        response = JSONResponse(
            {"error": "unauthorized", "detail": "missing or invalid bearer token"},
            status_code=401,
            headers={"WWW-Authenticate": 'Bearer realm="memlane"'},
        )
        await response(scope, receive, send)


async def _health(_request: Request) -> Response:
    return JSONResponse({"status": "serving"})


def build_http_app(server: Server[Any], *, host: str, token: str | None) -> ASGIApp:
    """The ASGI app: `/mcp` (streamable HTTP) behind the token, `/health` open."""
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=host,
        custom_starlette_routes=[Route(HEALTH_PATH, _health, methods=["GET"])],
    )
    return BearerTokenGate(app, token) if token is not None else app


def serve_http(
    app: ASGIApp,
    *,
    host: str,
    port: int,
    tls_cert: str | None = None,
    tls_key: str | None = None,
    tls_client_ca: str | None = None,
    on_ready: Callable[[], object] = lambda: None,
    server_name: str = "mcp_http",
) -> None:
    """Serve `app` until SIGINT/SIGTERM; with `tls_client_ca`, clients need a certificate.
    `server_name` names the server in its log lines (the web page shares this function)."""
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_config=None,  # structlog owns stderr; uvicorn must not install its own handlers
        access_log=False,
        ssl_certfile=tls_cert,
        ssl_keyfile=tls_key,
        ssl_ca_certs=tls_client_ca,
        ssl_cert_reqs=ssl.CERT_REQUIRED if tls_client_ca else ssl.CERT_NONE,
        lifespan="on",
    )
    if not is_loopback(host) and tls_cert is None:
        _log.warning(f"{server_name}_insecure_listener", host=host, port=port)
    on_ready()
    uvicorn.Server(config).run()
