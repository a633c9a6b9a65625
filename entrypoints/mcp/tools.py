"""Entry point: the MCP tools: names, model-facing descriptions, schemas, their errors.

Search and get reuse the agent-tool payloads of `entrypoints.api`, so an MCP host sees exactly
what an embedded agent sees. Every failure takes its form from the one error table of every
face (`entrypoints/errors.py`): a tool error (`isError`) whose payload says what went wrong;
`disabled: true` only when memory is off or broken. Arguments are first checked against the
tool's declared input schema (`arguments.py`): a wrong call is `invalid arguments: ...` with
the fields the tool expects. No tool text names an absolute host path: paths inside the
workspace are shown relative to it, the workspace and state directory by name (`PathHider`).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field

import structlog
from mcp.types import ToolAnnotations

from memlane.application.enabled import require_enabled
from memlane.application.memory import MemoryManager
from memlane.application.search_syncs import FIRST_SYNC_RUNNING
from memlane.application.writing import WriteNote
from memlane.domain.errors import InvalidQuery, MemoryDisabled
from memlane.entrypoints.casing import camel_dict
from memlane.entrypoints.errors import INVALID_ARGUMENTS, failure_payload, kind_of
from memlane.entrypoints.logging import redacted_summary
from memlane.entrypoints.mcp.arguments import check_arguments, expected_fields
from memlane.entrypoints.tool_payloads import memory_get_tool, memory_search_tool

Payload = dict[str, object]
_log = structlog.get_logger("memlane.mcp")


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
        "Follow up with memory_get for more lines. A tool error with disabled=true means memory "
        "is turned off or broken: tell the user instead of guessing; any other tool error says "
        "what to fix in the call and the expected fields. `warnings` means the results may be "
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
        "secrets: API keys, tokens, passwords and private keys are masked before writing "
        "(`masked` in the reply says what), unless you pass redact: false. The note is "
        "searchable as soon as this returns; cite the returned path."
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
            "redact": {
                "type": "boolean",
                "default": True,
                "description": (
                    "Mask secrets in the text before writing (default). false stores the text "
                    "exactly as given: only when the user asked to keep that value."
                ),
            },
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
        "memory_search reports disabled=true or seems to miss notes that should exist."
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


class PathHider:
    """Replace absolute host paths in tool text: a path inside the workspace becomes relative to
    it, the workspace itself `<workspace>`, the state directory `<state dir>`, home `~`.

    `roots` maps each absolute folder to its shown name; the longest (innermost) wins.
    """

    def __init__(self, roots: Mapping[str, str] | None = None) -> None:
        found = ((p.rstrip("/"), name) for p, name in (roots or {}).items() if p.rstrip("/"))
        # A root ends at a `/` or where a path part ends (`/a/ws` is not in `/a/ws2`).
        self._roots = [
            (re.compile(re.escape(root) + r"(/|(?![\w-]|\.\w))"), name)
            for root, name in sorted(found, key=lambda r: len(r[0]), reverse=True)
        ]

    def text(self, value: str) -> str:
        """`value` with every known root replaced by its name."""
        for pattern, name in self._roots:
            inside = "" if name == "<workspace>" else f"{name}/"

            def shown(match: re.Match[str], name: str = name, inside: str = inside) -> str:
                return inside if match.group(1) else name

            value = pattern.sub(shown, value)
        return value

    def __call__(self, payload: Payload) -> Payload:
        hidden = self._value(payload)
        assert isinstance(hidden, dict)
        return hidden

    def _value(self, value: object) -> object:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self._value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._value(v) for v in value]
        return value


def host_roots(workspace: str, state_dir: str | None, home: str | None) -> dict[str, str]:
    """The folders a tool text must not show, with the names shown instead."""
    roots = {workspace: "<workspace>"}
    if state_dir:
        roots[state_dir] = "<state dir>"
    if home:
        roots[home] = "~"
    return roots


@dataclass
class MemoryTools:
    """The tool implementations over one live manager (blocking; callers use a worker thread).

    `first_sync` is set once the start-up sync has finished; until then searches say so.
    """

    manager: MemoryManager
    write_note: WriteNote | None
    first_sync: threading.Event = field(default_factory=threading.Event)
    hide: PathHider = field(default_factory=PathHider)

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
        redact = args.get("redact", True)
        if not isinstance(redact, bool):
            raise InvalidQuery("redact must be true or false")
        result = self.write_note(text, path=path, mode=mode, redact=redact)
        payload: Payload = {
            "path": result.path,
            "mode": result.mode,
            "bytesWritten": result.bytes_written,
            "size": result.size,
            "indexed": result.indexed,
            "citation": result.path,
            # What was masked, by kind, never the secrets; {} when nothing was (or redact false).
            "redacted": result.redacted,
            "masked": dict(result.masked),
        }
        if result.index_error is not None:
            payload["warning"] = f"saved, but the index is behind: {result.index_error}"
        return payload

    def status(self, args: Mapping[str, object]) -> Payload:
        """memory_status: the status report as JSON values, keyed as `status --json` is
        (camelCase); the search and get payloads keep the reference's own tool shape. Memory
        turned off is a status, not an error: said as `status --json` says it."""
        deep = args.get("deep", False)
        if not isinstance(deep, bool):
            raise InvalidQuery("deep must be true or false")
        try:
            require_enabled(self.manager.settings)
        except MemoryDisabled as exc:
            return {
                "agentId": self.manager.agent_id,
                "enabled": False,
                "status": "disabled",
                "reason": str(exc),
                "firstSyncDone": self.first_sync.is_set(),
            }
        report = self.manager.status(deep=deep)
        data: Payload = json.loads(json.dumps(camel_dict(asdict(report)), default=str))
        data["enabled"] = True
        data["firstSyncDone"] = self.first_sync.is_set()
        return data


def run_tool(tools: MemoryTools, name: str, args: Mapping[str, object]) -> tuple[Payload, bool]:
    """Run tool `name`; return its payload and whether it is a tool error.

    Never raises for a failing call: every error becomes a payload the model can read (its
    form from entrypoints/errors.py). KeyError only for a tool this server does not offer (the
    caller answers per protocol).
    """
    handler = tools.handler(name)
    spec = next((s for s in tools.specs() if s.name == name), None)
    if handler is None or spec is None:
        raise KeyError(name)
    try:
        check_arguments(spec.schema, args)
        payload = handler(args)
    except Exception as exc:  # the one error table, never a crashed server
        # The error's kind and a redacted summary; never the arguments (the traceback is
        # rendered without locals and redacted: entrypoints/logging.py).
        if kind_of(exc) is None:
            _log.exception(
                "mcp_tool_failed",
                tool=name,
                error=type(exc).__name__,
                summary=redacted_summary(exc),
            )
        else:
            _log.info("mcp_tool_refused", tool=name, error=type(exc).__name__)
        payload = failure_payload(exc, tool=_SHAPES.get(name, ""), path=_path_arg(args))
    failed = "error" in payload
    # A wrong call the shared payload reported itself (an unknown agent, a blank query).
    wrong_call = failed and str(payload["error"]).startswith(f"{INVALID_ARGUMENTS}:")
    if wrong_call and "expected" not in payload:
        payload["expected"] = expected_fields(spec.schema)
    return tools.hide(payload), failed


_SHAPES = {SEARCH.name: "search", GET.name: "get", WRITE.name: "write"}


def _path_arg(args: Mapping[str, object]) -> str:
    path = args.get("path")
    return path if isinstance(path, str) else ""
