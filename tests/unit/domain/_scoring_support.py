"""Helpers of the scoring, decay and MMR tests: candidate and fused-hit builders, a fixed clock."""

from __future__ import annotations

import calendar

from memlane.domain.chunks import ChunkId
from memlane.domain.scoring import (
    Fused,
)
from memlane.domain.search import Candidate
from memlane.domain.sources import Source

DAY = 86_400.0
NOW = float(calendar.timegm((2026, 3, 1, 0, 0, 0)))


def cand(
    chunk_id: str,
    score: float,
    *,
    text: str = "",
    path: str = "notes.md",
    source: Source = "memory",
    file_mtime: float | None = None,
    timestamp: float | None = None,
) -> Candidate:
    return Candidate(
        chunk_id=ChunkId(chunk_id),
        source=source,
        path=path,
        start_line=1,
        end_line=2,
        text=text or f"text of {chunk_id}",
        score=score,
        file_mtime=file_mtime,
        timestamp=timestamp,
    )


def fused(
    chunk_id: str,
    score: float,
    *,
    text: str = "",
    text_score: float | None = None,
    vector_score: float | None = None,
    path: str = "notes.md",
    source: Source = "memory",
    file_mtime: float | None = None,
    timestamp: float | None = None,
    time_start: float | None = None,
    time_end: float | None = None,
) -> Fused:
    return Fused(
        chunk_id=ChunkId(chunk_id),
        source=source,
        path=path,
        start_line=1,
        end_line=2,
        text=text or f"text of {chunk_id}",
        vector_score=vector_score,
        text_score=text_score,
        score=score,
        file_mtime=file_mtime,
        timestamp=timestamp,
        time_start=time_start,
        time_end=time_end,
    )


def ids(items: list[Fused]) -> list[str]:
    return [item.chunk_id for item in items]
