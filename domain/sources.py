"""Domain: where indexed text comes from (memory notes or session transcripts)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

Source: TypeAlias = Literal["memory", "sessions"]
ALL_SOURCES: Final[tuple[Source, ...]] = ("memory", "sessions")


@dataclass(frozen=True, slots=True)
class FileStat:
    """What a source reports about one file without reading it.

    `path` is the stable indexed path: workspace-relative with `/` separators for memory files
    (`MEMORY.md`, `memory/2026-01-05.md`, or `../notes/x.md` for extra paths outside the
    workspace) and `sessions/<file name>` for transcripts. `mtime` is seconds since the epoch.
    """

    source: Source
    path: str
    mtime: float
    size: int


@dataclass(frozen=True, slots=True)
class SourceIssue:
    """A problem found while listing or reading a source, reported and never fatal."""

    path: str
    reason: str


def is_utf8_name(name: str) -> bool:
    """False for names that only decode through surrogate escapes (not valid UTF-8 on disk)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def readable_path(path: str) -> str:
    r"""`path` as printable UTF-8 text that a store, a log line or JSON output can hold.

    A valid UTF-8 path comes back unchanged. Any other is spelled as inside a Python bytes
    literal: each byte that did not decode, and each control character, as `\xHH`, and a
    backslash doubled (`memory/caf\xe9.md`). Nothing is lost: `codecs.escape_decode` gives
    the name's bytes back, so two such names never share a spelling (a replacement character
    would merge them).
    """
    if is_utf8_name(path):
        return path
    return "".join(_spelled(char) for char in path)


def _spelled(char: str) -> str:
    """One character of a path that is not valid UTF-8, as `readable_path` spells it."""
    if char == "\\":
        return "\\\\"
    if "\udc80" <= char <= "\udcff":  # os.fsdecode's stand-in for one undecodable byte
        return f"\\x{ord(char) - 0xDC00:02x}"
    if not char.isprintable():
        return "".join(f"\\x{byte:02x}" for byte in char.encode("utf-8", "surrogatepass"))
    return char
