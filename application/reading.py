"""Application: read lines of a memory file or a transcript (the `memory_get` use case).

Unlike in the reference system, transcript hits returned by search are readable too: their line
numbers are JSONL lines, and the reply shows those messages flattened (`User: ...`), redacted like
the index. Every path is re-validated by its FileSource: nothing outside the memory files and the
sessions directory can be read (no `..`, no absolute paths elsewhere, no symlink escapes).

As in the reference: a file that does not exist (yet: today's daily note) reads as empty text,
not as an error; `from` 0 (or unset) is the first line and a negative `from` is clamped to 1;
`lines` 0 (or unset) means to the end. A note's lines are numbered as the chunker numbers a
hit's: LF, CRLF and a lone CR end a line, a form feed, NEL or U+2028 does not. The spellings the
reference accepts are brought to the indexed form before the FileSource checks them:
`./memory/x.md`, `memory\\x.md` and an absolute path inside the workspace, or outside it as
an extra path's file is indexed (`../shared/x.md`). Nothing else is rewritten (no `..` folding
of relative paths), so every escape the FileSource refused before is still refused.
"""

from __future__ import annotations

import ntpath
import posixpath
from collections.abc import Callable, Mapping
from dataclasses import replace

from memlane.application.agent_directory import AgentDirectory
from memlane.application.enabled import require_enabled
from memlane.application.ports.file_source import FileMissing, FileRefused, FileSource
from memlane.application.reports import GetResult
from memlane.domain.chunking import normalise_newlines
from memlane.domain.config import MemorySettings
from memlane.domain.errors import InvalidQuery
from memlane.domain.sources import Source
from memlane.domain.text_decoding import NotText, decode_text
from memlane.domain.transcripts import TranscriptMessage, parse_transcript

# A read returns at most this many lines (a whole-file read of a huge note would flood an agent's
# context); where it stops early, GetResult.more_from says so and every surface shows it.
MAX_LINES = 10_000


class Reading:
    """The reading family of the facade: files of this agent or, after a search across agents,
    of another, redacted as the index has them (notes too with `redaction.notes`); nothing is
    read with memory search off (MemoryDisabled)."""

    def __init__(
        self,
        *,
        settings: MemorySettings,
        agents: AgentDirectory,
        redact: Callable[[str], str] | None = None,
    ) -> None:
        self._settings = settings
        self._agents = agents
        self._redact = redact

    def lines(
        self, path: str, *, from_line: int | None, lines: int | None, agent: str | None
    ) -> GetResult:
        require_enabled(self._settings)
        sources, workspace = self._agents.files_of(agent)
        return read_lines(
            sources,
            path,
            from_line=from_line,
            lines=lines,
            redact=self._redact,
            redact_notes=self._settings.redaction.notes,
            workspace=workspace,
        )

    def messages(
        self, path: str, *, agent: str | None
    ) -> tuple[str, tuple[TranscriptMessage, ...]]:
        require_enabled(self._settings)
        sources, workspace = self._agents.files_of(agent)
        return read_messages(sources, path, redact=self._redact, workspace=workspace)


def source_of(path: str) -> Source:
    """Tell which source an indexed path belongs to."""
    return "sessions" if path.startswith("sessions/") else "memory"


def read_lines(
    sources: Mapping[Source, FileSource],
    path: str,
    *,
    from_line: int | None = None,
    lines: int | None = None,
    redact: Callable[[str], str] | None = None,
    redact_notes: bool = False,
    workspace: str | None = None,
) -> GetResult:
    """Return `lines` lines of `path` starting at `from_line` (1-based; whole file if both None).

    Transcript messages are passed through `redact`; a note too when `redact_notes` (masks keep
    line breaks, so line numbers are those of the file).

    Raises InvalidQuery for a blank path or bad numbers, FileRefused for paths outside the
    sources, and the other SourceErrors for unreadable files.
    """
    path, source, data = _read(sources, path, workspace)
    start = _start(from_line)
    count = _positive("lines", lines or None, MAX_LINES)
    # Only a cap the caller did not ask for is reported: `lines=20` of a longer file is a window.
    capped = not lines or lines > MAX_LINES
    if data is None:
        return GetResult(
            path=path, text="", from_line=start, lines=count, source=source, missing=True
        )
    if source == "sessions":
        transcript = parse_transcript(data)
        picked = [
            f"{'User' if m.role == 'user' else 'Assistant'}: {redact(m.text) if redact else m.text}"
            for m in transcript.messages
            if start <= m.line < start + count
        ]
        goes_on = any(m.line >= start + count for m in transcript.messages)
        more_from = start + count if capped and goes_on else None
        return GetResult(path, "\n".join(picked), start, count, source, more_from)
    try:
        text = decode_text(data).text
    except NotText as exc:
        raise FileRefused(path, str(exc)) from exc
    if redact_notes and redact:
        text = redact(text)
    all_lines = normalise_newlines(text).split("\n")  # numbered as the chunker numbers them
    selected = all_lines[start - 1 : start - 1 + count]
    goes_on = all_lines[start - 1 + count :] not in ([], [""])  # not just the last newline
    more_from = start + count if capped and goes_on else None
    return GetResult(path, "\n".join(selected), start, count, source, more_from)


def read_messages(
    sources: Mapping[Source, FileSource],
    path: str,
    *,
    redact: Callable[[str], str] | None = None,
    workspace: str | None = None,
) -> tuple[str, tuple[TranscriptMessage, ...]]:
    """The indexed path and the messages of transcript `path` (role, JSONL line, time), each
    text passed through `redact` as the index and `read_lines` have it; a missing transcript
    has none. The same checks and refusals as `read_lines`, and FileRefused for a note."""
    path, source, data = _read(sources, path, workspace)
    if source != "sessions":
        raise FileRefused(path, "not a transcript (sessions/*.jsonl)")
    if data is None:
        return path, ()
    messages = parse_transcript(data).messages
    if redact is not None:
        messages = tuple(replace(m, text=redact(m.text)) for m in messages)
    return path, messages


def _read(
    sources: Mapping[Source, FileSource], path: str, workspace: str | None
) -> tuple[str, Source, bytes | None]:
    """Check `path` and read it through its source: (indexed path, source, bytes or None when
    the file does not exist). Raises InvalidQuery, FileRefused and the other SourceErrors."""
    raw: object = path  # callers outside mypy (the Python API, tools) may pass anything
    if not isinstance(raw, str):
        raise InvalidQuery(f"path must be a string, not {type(raw).__name__}")
    path = normalise_path(path.strip(), workspace)
    if not path:
        raise InvalidQuery("path required")
    source = source_of(path)
    reader = sources.get(source)
    if reader is None:
        raise FileRefused(path, f"the {source} source is not enabled")
    try:
        return path, source, reader.read_bytes(path)
    except FileMissing:
        # Only a path the source accepted can be missing: refusals are raised before.
        return path, source, None


def normalise_path(path: str, workspace: str | None = None) -> str:
    """The indexed spelling of a path the reference accepts (see the module doc)."""
    path = path.strip()
    if "\\" in path and not path.startswith("\\\\"):  # memory\x.md, never a UNC share
        path = path.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    if workspace and (posixpath.isabs(path) or ntpath.isabs(path)):
        root = posixpath.normpath(workspace.replace("\\", "/"))
        candidate = posixpath.normpath(path)
        if candidate.startswith(root.rstrip("/") + "/"):
            return candidate[len(root.rstrip("/")) + 1 :]
        if posixpath.isabs(path) and posixpath.isabs(root):
            # Outside the workspace: an extra path's file is indexed as `../shared/x.md`; the
            # source refuses it unless it lies in an extra path (the reference read it).
            return posixpath.relpath(candidate, root)
    return path


def _start(value: int | None) -> int:
    """`from` as the reference reads it: unset or 0 is line 1, a negative number is clamped."""
    raw: object = value  # callers outside mypy (tools, gRPC) may pass anything
    if raw is None:
        return 1
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise InvalidQuery("from must be a whole number")
    return max(1, raw)


def _positive(name: str, value: int | None, default: int) -> int:
    if value is None:
        return default
    raw: object = value  # callers outside mypy (tools, gRPC) may pass anything
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
        raise InvalidQuery(f"{name} must be a whole number >= 1")
    return min(value, MAX_LINES) if name == "lines" else value
