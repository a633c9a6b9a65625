"""Entry point: configure structlog once, to stderr, as console lines on a TTY or JSON lines.

Results go to stdout and diagnostics to stderr, so logs never mix with `--json` output. Log
events must never carry file contents, chunk text or secrets; `drop_sensitive_fields` enforces it
for the usual field names in case a call site forgets.
"""

from __future__ import annotations

import logging
import sys
from typing import Final

import structlog
from structlog.typing import EventDict, Processor, WrappedLogger

LEVELS: Final = ("debug", "info", "warning", "error", "critical")

# Field names that may hold note text or credentials; their values are replaced, not logged.
SENSITIVE_FIELDS: Final = frozenset(
    {
        "text",
        "content",
        "contents",
        "snippet",
        "chunk",
        "chunk_text",
        "query_text",
        "api_key",
        "apikey",
        "authorization",
        "token",
        "password",
        "secret",
        "headers",
    }
)
REDACTED: Final = "[redacted]"


def drop_sensitive_fields(_logger: WrappedLogger, _method: str, event_dict: EventDict) -> EventDict:
    """Replace the value of any field named like note text or a credential."""
    for key in list(event_dict):
        if key.lower() in SENSITIVE_FIELDS:
            event_dict[key] = REDACTED
    return event_dict


def configure_logging(*, json: bool | None = None, level: str = "warning") -> None:
    """Configure structlog for the whole process; call once from an entry point.

    Args:
        json: True for JSON lines, False for the console renderer, None to choose by whether
            stderr is a terminal (console on a TTY, JSON lines otherwise).
        level: the lowest level written: debug, info, warning, error or critical.

    Raises:
        ValueError: an unknown level name.
    """
    name = level.lower()
    if name not in LEVELS:
        raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LEVELS)}")
    stream = sys.stderr
    as_json = (not _is_tty(stream)) if json is None else json
    renderer: Processor
    if as_json:
        renderer = structlog.processors.JSONRenderer()
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=_is_tty(stream))
    processors: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        drop_sensitive_fields,
    ]
    if as_json:
        processors.append(structlog.processors.dict_tracebacks)
    processors.append(renderer)
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, name.upper())),
        logger_factory=structlog.WriteLoggerFactory(file=stream),
        # Not cached: a reconfiguration (tests, `--verbose` parsed late) reaches every logger.
        cache_logger_on_first_use=False,
    )


def _is_tty(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except ValueError:  # a closed stream
        return False


__all__ = ["LEVELS", "REDACTED", "SENSITIVE_FIELDS", "configure_logging", "drop_sensitive_fields"]
