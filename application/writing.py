"""Application: keep memory for a host without file tools (the `memory_write` use case).

A note goes to today's daily note (`memory/YYYY-MM-DD.md`, the date from the injected Clock, in
UTC as the dated-note decay reads it) or to a named note under `memory/`. Paths pass the same
allow-list as `memory_get`, narrowed to what an agent may create: `MEMORY.md` or a `.md` file
under `memory/`, in normal form (no `..`, no absolute path, no hidden or tool folder). The
NoteWriter re-checks symlinks on disk. After writing, the index is refreshed before returning,
so the next search finds the note.

What an agent writes is redacted first, with the transcripts' secret catalogue (a write from an
agent is exactly where a pasted key slips in), unless the caller opts out for that call; the
result says which kinds were masked and how many, never the secrets. Text that the indexer
could not read back (a NUL byte, a lone surrogate) is refused, not written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Final, Literal

from memlane.application.ports.clock import Clock
from memlane.application.ports.file_source import FileRefused
from memlane.application.ports.note_writer import NoteWriter
from memlane.application.reports import SyncReport
from memlane.domain.errors import InvalidQuery
from memlane.domain.redaction import Redaction

WriteMode = Literal["append", "replace"]

MAX_TEXT_BYTES: Final = 64 * 1024  # one call: a note, not a document dump
MAX_NOTE_BYTES: Final = 1024 * 1024  # the whole note after writing; well under the indexer's cap
_ROOT_NOTE: Final = "MEMORY.md"
_MEMORY_DIR: Final = "memory/"
# The longest file or folder name the common file systems take (ext4, APFS, NTFS: 255).
_MAX_NAME_BYTES: Final = 255
# Folders the memory source never lists: a note written there could never be found again.
_SKIPPED_DIRS: Final = frozenset(
    {"node_modules", "venv", "site-packages", "dist", "build", "__pycache__"}
)


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What was written where, and whether the index caught up before returning."""

    path: str
    mode: WriteMode
    bytes_written: int
    size: int
    indexed: bool
    index_error: str | None = None
    # Whether the text was redacted before writing, and what was masked: (kind, count) pairs.
    redacted: bool = False
    masked: tuple[tuple[str, int], ...] = ()


def daily_note_path(clock: Clock) -> str:
    """Today's daily note, dated by the clock's UTC day."""
    return f"memory/{clock.now().date().isoformat()}.md"


def check_note_path(path: str) -> str:
    """Return `path` if an agent may write it, else raise FileRefused saying why."""
    if not path or "\x00" in path or "\\" in path:
        raise FileRefused(path, "malformed path")
    if any(_is_control(c) for c in path):
        raise FileRefused(
            path, "the name holds a control character (a line break, an escape): use plain text"
        )
    if path.startswith("/") or (len(path) > 1 and path[1] == ":"):
        raise FileRefused(path, "absolute paths are refused; use memory/<name>.md")
    if path == _ROOT_NOTE:
        return path
    if not path.startswith(_MEMORY_DIR):
        raise FileRefused(path, "only MEMORY.md and notes under memory/ can be written")
    segments = path.split("/")
    for segment in segments:
        if segment in {"", ".", ".."}:
            raise FileRefused(path, "path is not in normal form (no '..', '.' or '//')")
    if any(len(segment.encode("utf-8", "surrogatepass")) > _MAX_NAME_BYTES for segment in segments):
        raise FileRefused(path, f"a name in the path is longer than {_MAX_NAME_BYTES} bytes")
    for folder in segments[1:-1]:
        if folder.startswith(".") or folder.lower() in _SKIPPED_DIRS:
            raise FileRefused(path, f"folder {folder!r} is never indexed")
    name = segments[-1]
    if name.startswith("."):
        # Not the ".md" rule: ".hidden.md" ends in .md, and was refused saying it should.
        raise FileRefused(path, "a name starting with '.' makes a hidden file: drop the dot")
    if not name.lower().endswith(".md") or len(name) <= len(".md"):
        raise FileRefused(path, "notes are Markdown files: end the name in .md")
    return path


def _is_control(char: str) -> bool:
    """A C0 or C1 control character or DEL: in a file name it breaks every `path#L1` citation
    and line of output that shows it, and an escape sequence would reach the user's terminal."""
    code = ord(char)
    return code < 0x20 or 0x7F <= code < 0xA0


class WriteNote:
    """Write or append a note, then refresh the index so search sees it."""

    def __init__(
        self,
        *,
        writer: NoteWriter,
        clock: Clock,
        refresh: Callable[[], object],
        redact: Callable[[str], Redaction] | None = None,
        max_text_bytes: int = MAX_TEXT_BYTES,
        max_note_bytes: int = MAX_NOTE_BYTES,
    ) -> None:
        self._writer = writer
        self._clock = clock
        self._refresh = refresh
        self._redact = redact
        self._max_text_bytes = max_text_bytes
        self._max_note_bytes = max_note_bytes

    def __call__(
        self,
        text: str,
        *,
        path: str | None = None,
        mode: WriteMode = "append",
        redact: bool = True,
    ) -> WriteResult:
        """Write `text` to `path` (default: today's daily note) and refresh the index.

        `redact=False` writes the text as given (the caller's explicit choice); otherwise the
        secrets the redactor finds are masked first. Raises InvalidQuery for empty, oversized or
        non-text text (a NUL byte, a lone surrogate) or an unknown mode, FileRefused for a path
        outside the allow-list, and the NoteWriter's errors for what the disk refuses. A failed
        refresh, or one skipped for another process's indexing, does not undo the write: the
        result says the index is behind, and why.
        """
        if mode not in ("append", "replace"):
            raise InvalidQuery("mode must be 'append' or 'replace'")
        if not text.strip():
            raise InvalidQuery("text required: pass the note to remember")
        _require_text(text)
        redaction = self._redact(text) if redact and self._redact is not None else None
        if redaction is not None:
            text = redaction.text
        data = text if text.endswith("\n") else text + "\n"
        raw = data.encode("utf-8")
        if len(raw) > self._max_text_bytes:
            raise InvalidQuery(f"text is {len(raw)} bytes; at most {self._max_text_bytes} per call")
        target = check_note_path(path.strip()) if path is not None else daily_note_path(self._clock)
        size = self._writer.write(
            target, raw, append=mode == "append", max_bytes=self._max_note_bytes
        )
        result = WriteResult(
            target,
            mode,
            len(raw),
            size,
            indexed=True,
            redacted=redaction is not None,
            masked=redaction.masked if redaction is not None else (),
        )
        try:
            report = self._refresh()
        except Exception as exc:  # the note is safe on disk; the next sync indexes it
            return replace(result, indexed=False, index_error=str(exc))
        skipped = _skipped(report)
        if skipped is not None:
            return replace(result, indexed=False, index_error=skipped)
        return result


def _skipped(report: object) -> str | None:
    """Why the refresh left the note out, when its sync was skipped: another process builds
    the first index or rebuilds it aside. Such a sync handles no event and says why in its
    warnings; a sync that ran handles at least the written note's change."""
    if isinstance(report, SyncReport) and report.events_handled == 0 and report.warnings:
        return "; ".join(report.warnings)
    return None


def _require_text(text: str) -> None:
    """Refuse what the indexer would skip or could not store: a NUL byte makes the note look
    binary (never indexed, silently), a lone surrogate cannot be written as UTF-8."""
    nul = text.find("\x00")
    if nul >= 0:
        raise InvalidQuery(
            f"text holds a NUL byte (U+0000) at character {nul}: notes are plain text, "
            "remove it and write again"
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidQuery(
            f"text holds a lone surrogate ({text[exc.start]!a}) at character {exc.start}: "
            "not valid Unicode, nothing was written"
        ) from exc
