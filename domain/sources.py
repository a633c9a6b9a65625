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
