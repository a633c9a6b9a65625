"""Entrypoint: the agent tools' payloads (`memory_search`, `memory_get`), shared by the MCP
server and the Python API: the reference's arguments read (camelCase names, snake_case aliases,
numbers given as strings), refused with a payload that says what to fix, and the answers in the
reference's shape. Split from api.py, which opens the managers these run over."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Final

from memlane.application.memory import MemoryManager
from memlane.domain.agents import parse_agents
from memlane.domain.confidence import NO_STRONG_MATCH
from memlane.domain.errors import InvalidQuery
from memlane.domain.search import SearchResult
from memlane.domain.time_bounds import parse_time_bound
from memlane.entrypoints.errors import failure_payload, kind_of


def chat_type(session_key: str | None) -> str:
    """direct / group / channel from a session key `agent:<id>:<rest>`; decides `auto` citations."""
    if not session_key:
        return "direct"
    parts = session_key.split(":")
    rest = parts[2:] if len(parts) > 2 and parts[0] == "agent" else []
    if "channel" in rest:
        return "channel"
    if "group" in rest:
        return "group"
    return "direct"


# The arguments each tool reads (the reference's camelCase names and our snake_case aliases).
_SEARCH_ARGUMENTS: Final = frozenset(
    {"query", "maxResults", "max_results", "minScore", "min_score", "agents", "since", "until"}
    | {"asOf", "as_of"}
)
_GET_ARGUMENTS: Final = frozenset({"path", "from", "from_line", "lines", "agent"})
_TIME_ARGUMENTS: Final = ("since", "until", "asOf", "as_of")


def memory_search_tool(
    manager: MemoryManager, params: Mapping[str, object], *, session_key: str | None = None
) -> dict[str, object]:
    """The `memory_search` tool: results, or the failure payload of entrypoints/errors.py
    (`disabled` with a truthful reason only when memory is off or broken)."""
    mode = manager.settings.citations
    citations = mode == "on" or (mode == "auto" and chat_type(session_key) == "direct")
    try:
        query = params.get("query")
        _check_times(params)
        response = manager.search(
            "" if query is None else query,  # type: ignore[arg-type]  # checked by search
            max_results=_number(params, "maxResults", "max_results", integer=True),  # type: ignore[arg-type]
            min_score=_number(params, "minScore", "min_score", integer=False),
            session_key=session_key,
            citations=citations,
            agents=_agents(params),
            since=params.get("since"),  # type: ignore[arg-type]  # checked by the manager
            until=params.get("until"),  # type: ignore[arg-type]
            as_of=_one_of(params, "asOf", "as_of"),  # type: ignore[arg-type]
        )
    except Exception as exc:
        if kind_of(exc) is None:  # a bug: the caller's own handler logs it
            raise
        return failure_payload(exc, tool="search")
    warnings = [*response.warnings, *_unknown_arguments(params, _SEARCH_ARGUMENTS)]
    return {
        "results": [result_payload(r) for r in response.results],
        "provider": response.provider,
        "model": response.model,
        "fallback": response.fallback,
        "citations": "on" if citations else "off",
        "mode": response.mode,
        "noStrongMatch": response.no_strong_match,
        **({"note": NO_STRONG_MATCH} if response.no_strong_match else {}),
        **({"warnings": warnings} if warnings else {}),
        **({"timeWords": response.time_words} if response.time_words else {}),
    }


def memory_get_tool(manager: MemoryManager, params: Mapping[str, object]) -> dict[str, object]:
    """The `memory_get` tool: lines of a memory file or of a transcript hit from search, or the
    failure payload of entrypoints/errors.py."""
    path = params.get("path")
    agent = params.get("agent")
    try:
        if not isinstance(path, str) or not path.strip():
            raise InvalidQuery("path required: a memory path such as memory/2026-01-05.md")
        if agent is not None and not isinstance(agent, str):
            raise InvalidQuery("agent must be an agent id (the `agent` of a search hit)")
        got = manager.get(
            path,
            from_line=_number(params, "from", "from_line", integer=True),  # type: ignore[arg-type]
            lines=_number(params, "lines", "lines", integer=True),  # type: ignore[arg-type]
            agent=agent or None,
        )
    except Exception as exc:
        if kind_of(exc) is None:
            raise
        return failure_payload(exc, tool="get", path=path if isinstance(path, str) else "")
    payload: dict[str, object] = {
        "path": got.path,
        "text": got.text,
        "from": got.from_line,
        "source": got.source,
    }
    if agent:
        payload["agent"] = agent
    if unknown := _unknown_arguments(params, _GET_ARGUMENTS):
        payload["warnings"] = unknown
    if got.missing:  # empty text, as in the reference, but not mistaken for an empty note
        payload["missing"] = True
        payload["note"] = "The file does not exist (yet): its text is empty."
    if got.more_from is not None:
        payload["moreFrom"] = got.more_from
        payload["note"] = (
            f"Only {got.lines} lines were returned; the file goes on. "
            f"Call memory_get with from={got.more_from} for the rest."
        )
    return payload


def tool_text(payload: Mapping[str, object]) -> str:
    """The text form an agent framework shows the model: the payload as indented JSON."""
    return json.dumps(payload, ensure_ascii=False, indent=2)


def result_payload(result: SearchResult) -> dict[str, object]:
    """One hit as it goes out in JSON, the same in the tool payloads and `search --json`."""
    data: dict[str, object] = {
        "path": result.path,
        "startLine": result.start_line,
        "endLine": result.end_line,
        "score": result.score,
        "snippet": result.snippet,
        "source": result.source,
        "confidence": result.confidence,
    }
    if result.agent is not None:
        data["agent"] = result.agent
    if result.citation is not None:
        data["citation"] = result.citation
    if result.time is not None:
        data["time"] = result.time
    return data


def _agents(params: Mapping[str, object]) -> tuple[str, ...] | None:
    """The payload's `agents` option (a list of ids, or "a,b"); None: this agent alone.

    Raises InvalidQuery for anything else (the payload then says why).
    """
    value = params.get("agents")
    return None if value is None else parse_agents(value)


def _one_of(params: Mapping[str, object], name: str, alias: str) -> object:
    """The argument given as `name` or its `alias`; InvalidQuery when both are given with other
    values (which one was meant cannot be told, and taking one would ignore the other unsaid)."""
    given, other = params.get(name), params.get(alias)
    if given is not None and other is not None and given != other and not _both_nan(given, other):
        raise InvalidQuery(f"{name} and {alias} are the same argument: give one")
    return given if given is not None else other


def _both_nan(one: object, other: object) -> bool:
    """NaN is unset for a number (the reference ignores it), and NaN != NaN."""
    return all(isinstance(v, float) and math.isnan(v) for v in (one, other))


def _check_times(params: Mapping[str, object]) -> None:
    """Refuse an unreadable time argument under the name the caller wrote (`asOf`): the manager
    would name its Python keyword (`as_of`). The manager still checks the window (it knows now)."""
    for name in _TIME_ARGUMENTS:
        parse_time_bound(params.get(name), now=0.0, end=False, name=name)


def _number(
    params: Mapping[str, object], name: str, alias: str, *, integer: bool
) -> int | float | None:
    """A numeric argument: a number or a numeric string (the reference reads both); unset or
    NaN is None (the reference ignores NaN). Anything else is refused with InvalidQuery, so the
    payload tells the model what to fix instead of quietly searching with the default. The
    error names the argument as the caller wrote it (`maxResults`, or its alias)."""
    if name not in params and alias in params:
        name = alias
    value = _one_of(params, name, alias)
    if value is None:
        return None
    number: object = value
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            number = None
    if isinstance(number, bool) or not isinstance(number, int | float):
        raise InvalidQuery(f"{name} must be a number, not {value!r}")
    if math.isnan(number):
        return None
    if math.isinf(number):
        raise InvalidQuery(f"{name} must be a finite number, not {value!r}")
    return int(number) if integer else float(number)


def _unknown_arguments(params: Mapping[str, object], known: frozenset[str]) -> list[str]:
    """A warning naming the arguments a tool does not take (ignored, but not silently)."""
    unknown = sorted(str(k) for k in params if k not in known)
    if not unknown:
        return []
    return [f"ignored unknown argument(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}"]
