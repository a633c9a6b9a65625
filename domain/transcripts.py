"""Domain: parsing JSONL session transcripts into user/assistant messages and rendering them.

Accepted records, one JSON object per line:
- `{"type": "message", "message": {"role": ..., "content": ...}}` (the reference shape), and
  `{"type": "user" | "assistant", "message": {...}}` (the shape Claude Code writes);
- `{"role": ..., "content": ...}` without a `message` object (an extension: the flat shape many
  agent runtimes write; a `type`, if present, must then be "message").
Only roles "user" and "assistant" are kept. `content` is a string or a list of blocks, of which
`{"type": "text", "text": ...}` blocks are kept and joined with a space. Whitespace runs
(newlines included) collapse to one space. Other well-formed records (tool results, system
prompts, session headers) are ignored silently; broken lines are skipped, counted and described
without their content, and so is a user or assistant message in any other record shape (its
record type named: a transcript must not index as nothing without a word). Parsing never
raises on bad input.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final, Literal, TypeAlias, cast

Role: TypeAlias = Literal["user", "assistant"]

# A message with pasted images or a PDF (base64 inside the line) runs to megabytes; its text
# must not be lost with them. A line past this is skipped and reported.
DEFAULT_MAX_LINE_BYTES: Final = 64 * 1024 * 1024
_LABELS: Final[Mapping[Role, str]] = {"user": "User", "assistant": "Assistant"}
# Epoch numbers from this magnitude up are taken as nanoseconds, microseconds, milliseconds
# (each threshold is the year 5138 in the next coarser unit, and 1973 in its own).
_EPOCH_UNITS: Final = ((1e17, 1e9), (1e14, 1e6), (1e11, 1e3))
# Times a datetime can show in any time zone (a day inside years 1 and 9999); a time outside
# is a broken value, not a date, and would break every hit showing it.
_EARLIEST: Final = datetime(1, 1, 2, tzinfo=UTC).timestamp()
_LATEST: Final = datetime(9999, 12, 30, tzinfo=UTC).timestamp()
_BOM: Final = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class TranscriptMessage:
    """One user or assistant message; `line` is its 1-based JSONL line number."""

    line: int
    role: Role
    text: str
    timestamp: float | None


@dataclass(frozen=True, slots=True)
class Transcript:
    """The messages of a transcript plus what had to be skipped (`problems` never quote content)."""

    messages: tuple[TranscriptMessage, ...]
    skipped_lines: int
    problems: tuple[str, ...]
    # Invalid UTF-8 sequences read as U+FFFD, as the reference reads them and as notes are read:
    # one bad byte used to drop the whole message.
    replaced_bytes: int = 0
    # User or assistant messages in a record shape not read, described ("" when none).
    unread: str = ""


@dataclass(frozen=True, slots=True)
class RenderedTranscript:
    """Transcript text to chunk: one `User: ...` / `Assistant: ...` line per message.

    `line_numbers[i]` is the JSONL line of rendered line i+1 and `timestamps[i]` its time.
    """

    text: str
    line_numbers: tuple[int, ...]
    timestamps: tuple[float | None, ...]


class _LineError(Exception):
    """A line that must be skipped and reported; the message names the reason, not content."""


def _normalise(text: str) -> str:
    return " ".join(text.split())


def _content_text(content: object) -> str | None:
    if isinstance(content, str):
        return _normalise(content)
    if isinstance(content, list):
        parts = []
        for block in cast("list[object]", content):
            if isinstance(block, dict):
                fields = cast("dict[str, object]", block)
                text = fields.get("text")
                if fields.get("type") == "text" and isinstance(text, str):
                    normalised = _normalise(text)
                    if normalised:
                        parts.append(normalised)
        return " ".join(parts)
    return None


def parse_timestamp(value: object) -> float | None:
    """Epoch seconds from an ISO 8601 string or an epoch number (ms, us or ns if very large),
    else None; a time outside the years 1 to 9999 is None too."""
    if isinstance(value, bool):
        return None
    seconds: float | None = None
    if isinstance(value, int | float):
        seconds = _epoch_seconds(float(value))
    elif isinstance(value, str):
        stripped = value.strip()
        try:
            parsed = datetime.fromisoformat(stripped)
        except ValueError:
            try:
                seconds = _epoch_seconds(float(stripped))
            except ValueError:
                return None
        else:
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=UTC)
            seconds = parsed.timestamp()
    if seconds is None or not math.isfinite(seconds) or not _EARLIEST <= seconds <= _LATEST:
        return None
    return seconds


def _epoch_seconds(number: float) -> float:
    for threshold, per_second in _EPOCH_UNITS:
        if abs(number) >= threshold:
            return number / per_second
    return number


def _decode_line(raw: bytes) -> tuple[str, int]:
    """The line's text and how many invalid UTF-8 sequences became U+FFFD in it."""
    try:
        return raw.decode("utf-8"), 0
    except UnicodeDecodeError:
        line = raw.decode("utf-8", errors="replace")
        return line, line.count("\ufffd") - raw.count("\ufffd".encode())


def _decode_record(line: str) -> dict[str, object] | None:
    """The JSON object on one line, None for a blank line; raises _LineError for a broken one."""
    if not line.strip():
        return None
    try:
        record: object = json.loads(line)
    except ValueError:
        raise _LineError("malformed JSON") from None
    except RecursionError:
        raise _LineError("JSON nested too deeply") from None
    if not isinstance(record, dict):
        raise _LineError("not a JSON object")
    return cast("dict[str, object]", record)


# Record types whose `message` object is a message: the reference's, and the one Claude Code
# writes (`{"type": "user", "message": {"role": "user", ...}}`).
_MESSAGE_TYPES: Final = ("message", "user", "assistant")


class _UnreadShape(Exception):
    """A user or assistant message in a record shape that is not read (said, not guessed at)."""


def _shown_type(kind: object) -> str:
    """A record's type as an issue names it: a short string quoted, anything else by its kind
    (the issue describes the file, it does not copy what the file holds)."""
    if kind is None:
        return "none"
    if isinstance(kind, str) and len(kind) <= _TYPE_SHOWN:
        return json.dumps(kind, ensure_ascii=False)
    return "<a long string>" if isinstance(kind, str) else f"<a {type(kind).__name__}>"


_TYPE_SHOWN: Final = 40


def _message_of(record: dict[str, object], number: int) -> TranscriptMessage | None:
    inner = record.get("message")
    if isinstance(inner, dict):
        message = cast("dict[str, object]", inner)
        if record.get("type") not in _MESSAGE_TYPES:
            if message.get("role") in ("user", "assistant"):
                raise _UnreadShape(_shown_type(record.get("type")))
            return None
    elif "message" not in record and record.get("type", "message") in _MESSAGE_TYPES:
        message = record
    else:
        if record.get("role") in ("user", "assistant"):
            raise _UnreadShape(_shown_type(record.get("type")))
        return None
    role = message.get("role")
    if role not in ("user", "assistant"):
        return None
    text = _content_text(message.get("content"))
    if not text:
        return None
    stamp = parse_timestamp(record.get("timestamp"))
    if stamp is None:
        stamp = parse_timestamp(message.get("timestamp"))
    return TranscriptMessage(line=number, role=role, text=text, timestamp=stamp)


def parse_transcript(data: bytes, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> Transcript:
    """Parse JSONL bytes into messages; never raises on malformed input.

    A last line without a trailing newline is accepted when it is a complete JSON object and
    reported as truncated otherwise (a writer may be in the middle of appending it).
    """
    data = data.removeprefix(_BOM)
    raw_lines = data.split(b"\n")
    complete_last = data.endswith(b"\n")
    if complete_last:
        raw_lines.pop()
    messages: list[TranscriptMessage] = []
    problems: list[str] = []
    unread: dict[str, int] = {}  # record type -> first line holding a message it hides
    unread_count = 0
    replaced = 0
    for number, raw in enumerate(raw_lines, start=1):
        try:
            if len(raw) > max_line_bytes:
                raise _LineError(f"longer than {max_line_bytes} bytes")
            line, bad = _decode_line(raw)
            record = _decode_record(line)
            replaced += bad
        except _LineError as error:
            is_partial = number == len(raw_lines) and not complete_last
            reason = f"truncated last line ({error})" if is_partial else str(error)
            problems.append(f"line {number}: {reason}")
            continue
        if record is not None:
            try:
                message = _message_of(record, number)
            except _UnreadShape as shape:
                unread.setdefault(shape.args[0], number)
                unread_count += 1
                continue
            if message is not None:
                messages.append(message)
    shapes = ", ".join(f'"type": {kind} from line {line}' for kind, line in unread.items())
    return Transcript(
        messages=tuple(messages),
        skipped_lines=len(problems),
        problems=tuple(problems),
        replaced_bytes=replaced,
        unread=f"{unread_count} message(s) in a record shape not read ({shapes})" if unread else "",
    )


def render_transcript(
    transcript: Transcript, redact: Callable[[str], str] | None = None
) -> RenderedTranscript:
    """Render messages as `User: ...` / `Assistant: ...` lines, redacting each message text."""
    lines = []
    for message in transcript.messages:
        # Re-normalised so a redaction that inserts newlines cannot shift the line mapping.
        text = _normalise(redact(message.text)) if redact is not None else message.text
        lines.append(f"{_LABELS[message.role]}: {text}")
    return RenderedTranscript(
        text="\n".join(lines),
        line_numbers=tuple(m.line for m in transcript.messages),
        timestamps=tuple(m.timestamp for m in transcript.messages),
    )


def count_messages(data: bytes) -> int:
    """Number of user/assistant messages in complete lines of `data` (a partial last line is not
    counted: it is counted once its newline arrives). Used for session-growth thresholds."""
    end = data.rfind(b"\n")
    if end < 0:
        return 0
    return len(parse_transcript(data[: end + 1]).messages)


def count_new_messages(data: bytes, indexed_size: int) -> int:
    """Messages in the complete lines of `data` that its first `indexed_size` bytes, parsed as
    a transcript, did not hold: what a transcript that grew from that size adds. A line cut at
    `indexed_size` counts once complete, unless its first part already parsed as a message."""
    held = len(parse_transcript(data[:indexed_size]).messages)
    return max(0, count_messages(data) - held)
