"""Entry point: compose and run `memlane mcp` (stdio, or streamable HTTP) for one manager."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import anyio

from memlane.application.memory import MemoryManager
from memlane.entrypoints.api import runtime_of
from memlane.entrypoints.container import memory_listing, note_writing
from memlane.entrypoints.mcp.http import build_http_app, serve_http
from memlane.entrypoints.mcp.server import build_server, serve_stdio, start_background
from memlane.entrypoints.mcp.tools import MemoryTools, PathHider, host_roots


@dataclass(frozen=True, slots=True)
class HttpOptions:
    """Where and how to listen for streamable HTTP."""

    host: str
    port: int
    token: str | None
    tls_cert: str | None = None
    tls_key: str | None = None
    tls_client_ca: str | None = None


def memory_tools(manager: MemoryManager, *, read_only: bool) -> MemoryTools:
    """The MCP tools over `manager`; memory_write only when not read-only; no host path shown."""
    runtime = runtime_of(manager)
    roots = host_roots(
        str(Path(manager.workspace).resolve()),
        None if runtime is None else str(runtime.state_dir.resolve()),
        str(Path.home()),
    )
    return MemoryTools(
        manager=manager,
        write_note=None if read_only else note_writing(manager),
        hide=PathHider(roots),
    )


def run_mcp(manager: MemoryManager, *, read_only: bool, http: HttpOptions | None) -> None:
    """Serve until the host hangs up (stdio) or a signal arrives (HTTP).

    The server answers at once; the first sync runs in the background and the watcher and
    interval syncs keep the index fresh while it runs.
    """
    tools = memory_tools(manager, read_only=read_only)
    server = build_server(tools, memory_listing(manager))
    if http is None:
        anyio.run(serve_stdio, server, lambda: start_background(tools))
        return
    serve_http(
        build_http_app(server, host=http.host, token=http.token),
        host=http.host,
        port=http.port,
        tls_cert=http.tls_cert,
        tls_key=http.tls_key,
        tls_client_ca=http.tls_client_ca,
        on_ready=lambda: start_background(tools),
    )
