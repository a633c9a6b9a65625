"""Entry point: the MCP server over the memory tools: tools, resources, stdio transport.

Protocol answers, beyond what the SDK does itself:
* an unknown tool (or memory_write under --read-only) is a JSON-RPC error -32602, as the
  protocol asks; a failing call of a known tool is a tool result with `isError`;
* arguments over `MAX_ARGUMENT_BYTES` are refused with -32602 before any work;
* over stdio, a line that is not JSON gets -32700 (parse error) and valid JSON that is no
  JSON-RPC message gets -32600, both with a null id (the SDK alone would drop them silently).

Memory notes are resources `memlane://notes/<path>` (`memlane://notes/MEMORY.md`,
`memlane://notes/memory/2026-01-05.md`: the indexed path once, under the kind of thing named);
the `memlane://memory/<path>` URIs of earlier versions still read. Reading one goes through
`memory_get`'s allow-list.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Final
from urllib.parse import quote, unquote

import anyio
import structlog
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    CallToolRequestParams,
    CallToolResult,
    ErrorData,
    JSONRPCError,
    ListResourcesResult,
    ListToolsResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    TextContent,
    TextResourceContents,
    Tool,
)
from pydantic import ValidationError

from memlane.entrypoints.mcp.tools import MemoryTools, run_tool
from memlane.entrypoints.tool_payloads import tool_text

URI_PREFIX: Final = "memlane://notes/"
# Earlier versions put the source name first (a daily note read memlane://memory/memory/...);
# clients may have kept such URIs.
OLD_URI_PREFIX: Final = "memlane://memory/"
MAX_ARGUMENT_BYTES: Final = 256 * 1024  # four times memory_write's text limit
RESOURCE_PAGE: Final = 500
INSTRUCTIONS: Final = (
    "memlane is this agent's long-term memory. Before answering about prior work, decisions, "
    "dates, people, preferences or todos, call memory_search, then memory_get for exact lines; "
    "cite hits as path#Lstart-Lend. Use memory_write (when offered) to keep what should "
    "outlive this session."
)

_log = structlog.get_logger("memlane.mcp")
Lister = Callable[[], list[str]]


def resource_uri(path: str) -> str:
    """The resource URI of an indexed memory path."""
    return URI_PREFIX + quote(path, safe="/")


def path_of(uri: str) -> str:
    """The indexed memory path a resource URI names; MCPError -32602 for a foreign URI."""
    for prefix in (URI_PREFIX, OLD_URI_PREFIX):
        if uri.startswith(prefix):
            return unquote(uri[len(prefix) :])
    raise MCPError(code=INVALID_PARAMS, message=f"unknown resource: {uri}")


def build_server(tools: MemoryTools, list_memory_files: Lister) -> Server[Any]:
    """The low-level MCP server over `tools`; `list_memory_files` lists the memory notes."""

    async def on_list_tools(
        _ctx: object, _params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(
            tools=[
                Tool(
                    name=spec.name,
                    description=spec.description,
                    input_schema=spec.schema,
                    annotations=spec.annotations,
                )
                for spec in tools.specs()
            ]
        )

    async def on_call_tool(_ctx: object, params: CallToolRequestParams) -> CallToolResult:
        arguments: Mapping[str, object] = params.arguments or {}
        size = len(json.dumps(arguments, ensure_ascii=False).encode())
        if size > MAX_ARGUMENT_BYTES:
            raise MCPError(
                code=INVALID_PARAMS,
                message=f"arguments are {size} bytes; the limit is {MAX_ARGUMENT_BYTES}",
            )
        if tools.handler(params.name) is None:
            hint = (
                " (disabled: the server runs with --read-only)"
                if params.name == "memory_write"
                else ""
            )
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {params.name}{hint}")
        payload, failed = await anyio.to_thread.run_sync(run_tool, tools, params.name, arguments)
        return CallToolResult(
            content=[TextContent(type="text", text=tool_text(payload))],
            structured_content=payload,
            is_error=failed,
        )

    async def on_list_resources(
        _ctx: object, params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        paths = await anyio.to_thread.run_sync(list_memory_files)
        start = _cursor(params.cursor if params is not None else None)
        page = paths[start : start + RESOURCE_PAGE]
        following = start + RESOURCE_PAGE
        return ListResourcesResult(
            resources=[
                Resource(uri=resource_uri(p), name=p, mime_type="text/markdown") for p in page
            ],
            next_cursor=str(following) if following < len(paths) else None,
        )

    async def on_read_resource(
        _ctx: object, params: ReadResourceRequestParams
    ) -> ReadResourceResult:
        uri = str(params.uri)
        path = path_of(uri)
        if path.startswith("sessions/"):
            raise MCPError(code=INVALID_PARAMS, message=f"not a memory note: {uri}")
        payload = await anyio.to_thread.run_sync(tools.get, {"path": path})
        if "error" in payload:
            message = tools.hide.text(str(payload["error"]))
            raise MCPError(code=INVALID_PARAMS, message=message, data={"uri": uri})
        return ReadResourceResult(
            contents=[
                TextResourceContents(uri=uri, mime_type="text/markdown", text=str(payload["text"]))
            ]
        )

    return Server(
        "memlane",
        version=_version(),
        title="memlane memory",
        instructions=INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        on_list_resources=on_list_resources,
        on_read_resource=on_read_resource,
    )


def _cursor(cursor: str | None) -> int:
    if cursor is None:
        return 0
    if not cursor.isdigit():
        raise MCPError(code=INVALID_PARAMS, message="invalid cursor")
    return int(cursor)


def _version() -> str:
    try:
        return version("memlane")
    except PackageNotFoundError:  # running from a source tree
        return "0"


def start_background(tools: MemoryTools) -> threading.Thread:
    """Run the first sync in the background, then keep the index fresh (watcher + interval)."""

    def run() -> None:
        manager = tools.manager
        if not manager.settings.enabled:  # nothing to index: the tools say memory is off
            tools.first_sync.set()
            return
        try:
            # Keyword rows first; missing vectors are embedded in the background after `start`.
            manager.sync(wait_for_vectors=False)
        except Exception as exc:  # searches still answer, from what is indexed
            _log.error("mcp_first_sync_failed", error=str(exc), error_type=type(exc).__name__)
        finally:
            tools.first_sync.set()
        try:
            manager.start()  # the file watcher as `sync.watch` says
        except Exception as exc:
            _log.error("mcp_watch_failed", error=str(exc), error_type=type(exc).__name__)

    thread = threading.Thread(target=run, name="memlane-mcp-start", daemon=True)
    thread.start()
    return thread


async def serve_stdio(server: Server[Any], on_ready: Callable[[], object]) -> None:
    """Serve one host over stdin/stdout until it closes stdin; `on_ready` runs once wired.

    While serving, the SDK points fd 1 at stderr, so nothing but protocol reaches stdout.
    """
    async with stdio_server() as (incoming, outgoing):
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def relay() -> None:
            async with send:
                async for item in incoming:
                    if isinstance(item, Exception):
                        await outgoing.send(SessionMessage(_protocol_error(item)))
                    else:
                        await send.send(item)

        on_ready()
        async with anyio.create_task_group() as group:
            group.start_soon(relay)
            await server.run(receive, outgoing, server.create_initialization_options())
            group.cancel_scope.cancel()


def _protocol_error(exc: Exception) -> JSONRPCError:
    """-32700 for text that is not JSON, -32600 for JSON that is no JSON-RPC message."""
    not_json = isinstance(exc, ValidationError) and any(
        e["type"] == "json_invalid" for e in exc.errors()
    )
    error = (
        ErrorData(code=PARSE_ERROR, message="Parse error: the line is not JSON")
        if not_json
        else ErrorData(code=INVALID_REQUEST, message="Invalid Request: not a JSON-RPC 2.0 message")
    )
    return JSONRPCError(jsonrpc="2.0", id=None, error=error)
