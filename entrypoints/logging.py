"""Entry point: configure structlog once, to stderr, as console lines on a TTY or JSON lines.

Results go to stdout and diagnostics to stderr, so logs never mix with `--json` output. Log
events must never carry file contents, chunk text or secrets; `drop_sensitive_fields` enforces it
for the usual field names in case a call site forgets, and `redact_secrets` masks what the
redaction catalogue finds (and URL passwords) in every string that is left, exception messages
included. Tracebacks are rendered without their frames' local variables: a failing tool call
has its arguments there, and any secret in them.
"""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import Callable
from typing import Any, Final

import structlog
from structlog.tracebacks import ExceptionDictTransformer
from structlog.typing import EventDict, Processor, WrappedLogger

from memlane.domain.redaction import Redactor
from memlane.domain.url_passwords import mask_url_passwords

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
SUMMARY_CHARS: Final = 300


@functools.cache
def _redactor() -> Redactor:
    """Built on the first line that needs it: compiling the catalogue's ~200 patterns was
    ~20 ms of every CLI start, most of which never log a line (`python -X importtime`)."""
    return Redactor()


def redacted_text(text: str) -> str:
    """`text` with URL passwords and every secret of the catalogue masked."""
    return _redactor().redact(mask_url_passwords(text))


def redacted_summary(exc: BaseException) -> str:
    """What to log about an error: its message, redacted and cut to `SUMMARY_CHARS`."""
    return redacted_text(str(exc))[:SUMMARY_CHARS]


def _redacted(value: object) -> object:
    if isinstance(value, str):
        return redacted_text(value)
    if isinstance(value, dict):
        return {key: _redacted(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_redacted(item) for item in value]
    return value


def redact_secrets(_logger: WrappedLogger, _method: str, event_dict: EventDict) -> EventDict:
    """Mask secrets in every string of the event, the rendered traceback included."""
    for key, value in event_dict.items():
        event_dict[key] = _redacted(value)
    return event_dict


def drop_sensitive_fields(_logger: WrappedLogger, _method: str, event_dict: EventDict) -> EventDict:
    """Replace the value of any field named like note text or a credential."""
    for key in list(event_dict):
        if key.lower() in SENSITIVE_FIELDS:
            event_dict[key] = REDACTED
    return event_dict


def configure_logging(
    *,
    json: bool | None = None,
    level: str = "warning",
    console_when: Callable[[], bool] | None = None,
) -> None:
    """Configure structlog for the whole process; call once from an entry point.

    Args:
        json: True for JSON lines, False for the console renderer, None to choose by whether
            stderr is a terminal (console on a TTY, JSON lines otherwise).
        level: the lowest level written: debug, info, warning, error or critical.
        console_when: asked for each line (the daemon: is the stderr of the client this thread
            answers a terminal?); True renders that line as a coloured console line, else the
            line is rendered as `json` says.

    Raises:
        ValueError: an unknown level name.
    """
    name = level.lower()
    if name not in LEVELS:
        raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LEVELS)}")
    stream = sys.stderr
    as_json = (not _is_tty(stream)) if json is None else json
    rendering = _rendering(as_json=as_json, colors=_is_tty(stream))
    if console_when is not None:
        rendering = [
            _RenderEachLine(console_when, _rendering(as_json=False, colors=True), rendering)
        ]
    processors: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        drop_sensitive_fields,
        *rendering,
    ]
    _route_standard_logging(getattr(logging, name.upper()))
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, name.upper())),
        logger_factory=structlog.WriteLoggerFactory(file=stream),
        # Not cached: a reconfiguration (tests, `--verbose` parsed late) reaches every logger.
        cache_logger_on_first_use=False,
    )


def _rendering(*, as_json: bool, colors: bool) -> list[Processor]:
    """The last processors of a line: its traceback, redaction, and the renderer.

    Tracebacks are rendered here, as data (JSON) or plain text (console), never with the
    frames' locals (structlog's and rich's default shows them), so that `redact_secrets` sees
    the exception messages before the renderer writes anything.
    """
    if as_json:
        return [
            structlog.processors.ExceptionRenderer(ExceptionDictTransformer(show_locals=False)),
            redact_secrets,
            structlog.processors.JSONRenderer(),
        ]
    return [
        structlog.processors.format_exc_info,
        redact_secrets,
        structlog.dev.ConsoleRenderer(
            colors=colors, exception_formatter=structlog.dev.plain_traceback
        ),
    ]


class _RenderEachLine:
    """Renders each line with one of two processor chains, asking which at every line."""

    def __init__(
        self, console_when: Callable[[], bool], console: list[Processor], other: list[Processor]
    ) -> None:
        self._console_when = console_when
        self._console = console
        self._other = other

    def __call__(self, logger: WrappedLogger, method: str, event_dict: EventDict) -> str | bytes:
        rendered: Any = event_dict
        for processor in self._console if self._console_when() else self._other:
            rendered = processor(logger, method, rendered)
        assert isinstance(rendered, str | bytes)
        return rendered


class _ThroughStructlog(logging.Handler):
    """Hands records of the standard `logging` module (uvicorn, the MCP SDK, httpx) to structlog,
    so that they pass the same redaction and renderer as our own events: without it they reach
    Python's last-resort handler, unredacted and in another format."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            structlog.get_logger().log(
                record.levelno,
                record.getMessage(),
                logger=record.name,
                exc_info=record.exc_info or False,
            )
        except Exception:  # logging must never raise into the caller
            self.handleError(record)


def _route_standard_logging(level: int) -> None:
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, _ThroughStructlog)]:
        root.removeHandler(handler)  # a reconfiguration replaces ours, keeps anyone else's
    root.addHandler(_ThroughStructlog(level))
    root.setLevel(level)


def _is_tty(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except ValueError:  # a closed stream
        return False


__all__ = [
    "LEVELS",
    "REDACTED",
    "SENSITIVE_FIELDS",
    "configure_logging",
    "drop_sensitive_fields",
    "redact_secrets",
    "redacted_summary",
    "redacted_text",
]
