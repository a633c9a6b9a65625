"""Adapters: the IndexStore's rows as domain values, the same for every store family.

Each family selects the same columns in the same order (its SQL differs, the tuples do not), so
a row becomes an IndexedFile, a Chunk or a Candidate here, once. Pure Python: both families
import it, neither imports the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from memlane.application.ports.index_store import IndexedFile
from memlane.domain.chunks import Chunk, ChunkId, ContentHash
from memlane.domain.search import Candidate
from memlane.domain.sources import Source


def file_from_row(row: Sequence[object]) -> IndexedFile:
    """(source, path, hash, mtime, size) → IndexedFile."""
    return IndexedFile(
        source=cast(Source, row[0]),
        path=str(row[1]),
        hash=ContentHash(str(row[2])),
        mtime=float(cast(float, row[3])),
        size=int(cast(int, row[4])),
    )


def chunk_from_row(row: Sequence[object]) -> Chunk:
    """(id, source, path, start_line, end_line, text, hash, timestamp, time_start, time_end,
    context) → Chunk."""
    return Chunk(
        id=ChunkId(str(row[0])),
        source=cast(Source, row[1]),
        path=str(row[2]),
        start_line=int(cast(int, row[3])),
        end_line=int(cast(int, row[4])),
        text=str(row[5]),
        hash=ContentHash(str(row[6])),
        timestamp=None if row[7] is None else float(cast(float, row[7])),
        time_start=_float_or_none(row[8]),
        time_end=_float_or_none(row[9]),
        context=str(row[10]),
    )


def candidate_from_row(row: Sequence[object], score: float) -> Candidate:
    """(rid, id, source, path, start_line, end_line, text, timestamp, file mtime, time_start,
    time_end) and the leg's score → Candidate."""
    return Candidate(
        chunk_id=ChunkId(str(row[1])),
        source=cast(Source, row[2]),
        path=str(row[3]),
        start_line=int(cast(int, row[4])),
        end_line=int(cast(int, row[5])),
        text=str(row[6]),
        score=score,
        file_mtime=None if row[8] is None else float(cast(float, row[8])),
        timestamp=None if row[7] is None else float(cast(float, row[7])),
        time_start=_float_or_none(row[9]),
        time_end=_float_or_none(row[10]),
    )


def _float_or_none(value: object) -> float | None:
    return None if value is None else float(cast(float, value))
