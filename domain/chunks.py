"""Domain: a chunk of indexed text and the chunking policy (the algorithms live in chunking.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NewType

from memlane.domain.heading_trail import indexed_text as _indexed_text
from memlane.domain.sources import Source

ChunkId = NewType("ChunkId", str)
ContentHash = NewType("ContentHash", str)


@dataclass(frozen=True, slots=True)
class ChunkingPolicy:
    """Token budget and overlap per chunk (defaults 400 / 80, as in the reference system)."""

    tokens: int = 400
    overlap: int = 80


@dataclass(frozen=True, slots=True)
class Chunk:
    """A span of lines of one file, the unit that is embedded and searched.

    Lines are 1-based and inclusive; for transcripts they are JSONL line numbers.
    `context` is the trail of headings a note's chunk sits under (domain/heading_trail.py), ""
    for transcripts and for a chunk under no heading; the model embeds it before `text` and the
    keyword index analyses it with `text` (`indexed_text`); `hash` is the sha256 of
    `indexed_text`, which is `text` alone when there is no context. `id` is unique within the
    index even when two chunks of one file have identical text. `timestamp` (epoch seconds) is
    when the text was written, known for transcript messages; None means "use the file's date".
    `time_start` / `time_end` (epoch seconds, inclusive) is when the text was written as a
    range, from message times, a dated file name or heading, else the file's mtime
    (domain/chunk_times.py); None for a chunk made without the file's mtime. Not part of the
    id or hash.
    """

    id: ChunkId
    source: Source
    path: str
    start_line: int
    end_line: int
    text: str
    hash: ContentHash
    timestamp: float | None = None
    time_start: float | None = None
    time_end: float | None = None
    context: str = ""

    @property
    def indexed_text(self) -> str:
        """What the indexes read (model and keyword analysis): the heading trail, then the text."""
        return _indexed_text(self.context, self.text)
