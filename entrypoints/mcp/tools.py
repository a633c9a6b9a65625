"""Entry point: the MCP tools: names, model-facing descriptions, schemas, one error table.

Search and get reuse the agent-tool payloads of `entrypoints.api`, so an MCP host sees exactly
what an embedded agent sees, `disabled` payloads included. Any payload that reports a failure
is returned as a tool error (`isError`), with the payload as its text, so the model reads why.

Errors reach the model through `ERROR_TEXT`, checked in order (subclasses first):

    MemoryDisabled                   disabled: ... (memorySearch.enabled is false)
    InvalidQuery, ConfigError        invalid arguments: ...
    FileRefused                      refused: ...
    FileMissing                      not found: ...
    FileTooLarge                     too large: ...
    SourceError (NoteWriteFailed)    file error: ...
    EmbeddingError                   embedding provider failed: ...
    StoreError, EventLogError        index error: ...
    SyncFailed                       sync failed: ...
    anything else                    internal error (details in the server log)
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Final

import structlog
from mcp.types import ToolAnnotations

from memlane.application.memory import MemoryManager
from memlane.application.ports.embedding import EmbeddingError
from memlane.application.ports.event_log import EventLogError
from memlane.application.ports.file_source import (
    FileMissing,
    FileRefused,
    FileTooLarge,
    SourceError,
)
from memlane.application.ports.index_store import StoreError
from memlane.application.scheduler import FIRST_SYNC_RUNNING
from memlane.application.sync_trigger import SyncFailed
from memlane.application.writing import WriteNote
from memlane.domain.errors import ConfigError, InvalidQuery, MemoryDisabled
from memlane.entrypoints.api import memory_get_tool, memory_search_tool
from memlane.entrypoints.casing import camel_dict

Payload = dict[str, object]
_log = structlog.get_logger("memlane.mcp")

ERROR_TEXT: Final[tuple[tuple[type[BaseException], str], ...]] = (
    (MemoryDisabled, "disabled"),
    (InvalidQuery, "invalid arguments"),
    (ConfigError, "invalid arguments"),
    (FileRefused, "refused"),
    (FileMissing, "not found"),
    (FileTooLarge, "too large"),
    (SourceError, "file error"),
    (EmbeddingError, "embedding provider failed"),
    (StoreError, "index error"),
    (EventLogError, "index error"),
    (SyncFailed, "sync failed"),
)


def error_text(exc: BaseException) -> str:
    """The message a tool error carries for `exc`; unexpected errors say only where to look."""
    for error_type, prefix in ERROR_TEXT:
        if isinstance(exc, error_type):
            return f"{prefix}: {exc}"
    return "internal error (details in the server log)"


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool as listed to the host."""

    name: str
    description: str
    schema: dict[str, object]
    annotations: ToolAnnotations


SEARCH = ToolSpec(
    name="memory_search",
    description=(
        "Search this agent's long-term memory: MEMORY.md, the notes under memory/ and past "
        "session transcripts, by meaning and by keywords (any language). Call it before "
        "answering anything about prior work, decisions, dates, people, preferences or todos, "
        "and whenever the user refers to an earlier conversation. Returns ranked hits with "
        "path, startLine, endLine, score, snippet and source. Cite what you use as "
        "path#Lstart-Lend (the `citation` field when present). Each hit has `time`, when it "
        "was written (ISO 8601); `since` / `until` keep only memories written in a window. "
        "Follow up with memory_get for more lines. If the result has disabled=true, memory is "
        "unavailable: tell the user instead of guessing. `warnings` means the results may be "
        "incomplete."
    ),
    schema={
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for, in natural language."},
            "maxResults": {"type": "integer", "minimum": 1, "maximum": 100},
            "minScore": {"type": "number", "minimum": 0, "maximum": 1},
            "since": {
                "type": ["string", "number"],
                "description": (
                    "Only memories written at or after this time: an ISO 8601 date or time, or "
                    "a span back from now such as 7d, 12h, 2w."
                ),
            },
            "until": {
                "type": ["string", "number"],
                "description": "Only memories written at or before this time (as `since`).",
            },
            "asOf": {
                "type": ["string", "number"],
                "description": (
                    "When the question is asked (ISO 8601), if not now: time words in the "
                    'query ("last week") are read against it.'
                ),
            },
            "agents": {
                "type": "array",
                "items": {"type": "string"},
                "description": (
                    "Agent ids whose memories to search together in one ranking (this "
                    "server's agent included only if listed); each hit then names its agent. "
                    "An unknown agent is an error. Pass a hit's agent to memory_get."
                ),
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
)
GET = ToolSpec(
    name="memory_get",
    description=(
        "Read exact lines of a memory note or transcript, usually a hit from memory_search "
        "(pass its path, and from/lines around startLine..endLine), to quote or check context "
        "without loading whole files. Only MEMORY.md, notes under memory/ (and configured extra "
        "note folders) and sessions/*.jsonl transcripts can be read."
    ),
    schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "e.g. memory/2026-01-05.md"},
            "from": {"type": "integer", "minimum": 1, "description": "First line, 1-based."},
            "lines": {"type": "integer", "minimum": 1, "description": "How many lines."},
            "agent": {
                "type": "string",
                "description": "The `agent` of a memory_search hit from another agent's memory.",
            },
        },
        "required": ["path"],
        "additionalProperties": False,
    },
    annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
)
WRITE = ToolSpec(
    name="memory_write",
    description=(
        "Save something worth remembering across sessions: a decision, a preference, a fact "
        "about the user or the project, a todo. By default appends to today's daily note "
        "(memory/YYYY-MM-DD.md); pass path 'memory/<topic>.md' for a named note and "
        "mode 'replace' to rewrite it. Write short Markdown in your own words and never store "
        "secrets. The note is searchable as soon as this returns; cite the returned path."
    ),
    schema={
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "The Markdown to remember."},
            "path": {
                "type": "string",
                "description": "MEMORY.md or memory/<name>.md; default today's daily note.",
            },
            "mode": {"type": "string", "enum": ["append", "replace"], "default": "append"},
        },
        "required": ["text"],
        "additionalProperties": False,
    },
    annotations=ToolAnnotations(
        read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
    ),
)
STATUS = ToolSpec(
    name="memory_status",
    description=(
        "Report the state of the memory index: provider and model, search mode, files and "
        "chunks per source, pending changes, the last sync and problems found. Call it when "
        "memory_search reports disabled or seems to miss notes that should exist."
    ),
    schema={
        "type": "object",
        "properties": {
            "deep": {"type": "boolean", "description": "Also probe the provider and rescan."}
        },
        "additionalProperties": False,
    },
    annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
)


@dataclass
class MemoryTools:
    """The tool implementations over one live manager (blocking; callers use a worker thread).

    `first_sync` is set once the start-up sync has finished; until then searches say so.
    """

    manager: MemoryManager
    write_note: WriteNote | None
    first_sync: threading.Event = field(default_factory=threading.Event)

    def specs(self) -> list[ToolSpec]:
        """The tools this server offers (memory_write only when writing is allowed)."""
        return [SEARCH, GET, *([WRITE] if self.write_note is not None else []), STATUS]

    def handler(self, name: str) -> Callable[[Mapping[str, object]], Payload] | None:
        """The implementation of tool `name`, or None when this server does not offer it."""
        handlers: dict[str, Callable[[Mapping[str, object]], Payload]] = {
            SEARCH.name: self.search,
            GET.name: self.get,
            STATUS.name: self.status,
        }
        if self.write_note is not None:
            handlers[WRITE.name] = self.write
        return handlers.get(name)

    def search(self, args: Mapping[str, object]) -> Payload:
        """memory_search: the shared payload, plus a warning while the first sync runs."""
        payload = memory_search_tool(self.manager, args)
        if not self.first_sync.is_set() and not payload.get("disabled"):
            existing = payload.get("warnings")
            warnings = [str(w) for w in existing] if isinstance(existing, list) else []
            if FIRST_SYNC_RUNNING not in warnings:  # the search itself may have said it
                warnings.append(FIRST_SYNC_RUNNING)
            payload["warnings"] = warnings
        return payload

    def get(self, args: Mapping[str, object]) -> Payload:
        """memory_get: the shared payload."""
        return memory_get_tool(self.manager, args)

    def write(self, args: Mapping[str, object]) -> Payload:
        """memory_write: write, refresh the index, report where it went."""
        if self.write_note is None:
            raise InvalidQuery("memory_write is turned off (--read-only)")
        text, path, mode = args.get("text"), args.get("path"), args.get("mode", "append")
        if not isinstance(text, str):
            raise InvalidQuery("text required: a string")
        if path is not None and not isinstance(path, str):
            raise InvalidQuery("path must be a string")
        if mode not in ("append", "replace"):
            raise InvalidQuery("mode must be 'append' or 'replace'")
        result = self.write_note(text, path=path, mode=mode)
        payload: Payload = {
            "path": result.path,
            "mode": result.mode,
            "bytesWritten": result.bytes_written,
            "size": result.size,
            "indexed": result.indexed,
            "citation": result.path,
        }
        if result.index_error is not None:
            payload["warning"] = f"saved, but the index is behind: {result.index_error}"
        return payload

    def status(self, args: Mapping[str, object]) -> Payload:
        """memory_status: the status report as JSON values, keyed as `status --json` is
        (camelCase); the search and get payloads keep the reference's own tool shape."""
        deep = args.get("deep", False)
        if not isinstance(deep, bool):
            raise InvalidQuery("deep must be true or false")
        report = self.manager.status(deep=deep)
        data: Payload = json.loads(json.dumps(camel_dict(asdict(report)), default=str))
        data["enabled"] = True  # a disabled memory answers with the error payload instead
        data["firstSyncDone"] = self.first_sync.is_set()
        return data


def run_tool(tools: MemoryTools, name: str, args: Mapping[str, object]) -> tuple[Payload, bool]:
    """Run tool `name`; return its payload and whether it is a tool error.

    Never raises for a failing call: every error becomes a payload the model can read.
    KeyError only for a tool this server does not offer (the caller answers per protocol).
    """
    handler = tools.handler(name)
    if handler is None:
        raise KeyError(name)
    try:
        payload = handler(args)
    except Exception as exc:  # the one error table, never a crashed server
        if not any(isinstance(exc, t) for t, _ in ERROR_TEXT):
            _log.exception("mcp_tool_failed", tool=name, error=type(exc).__name__)
        else:
            _log.info("mcp_tool_refused", tool=name, error=type(exc).__name__)
        return {"disabled": True, "error": error_text(exc)}, True
    return payload, payload.get("disabled") is True
