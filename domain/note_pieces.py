"""Domain: a note chunk's pieces, and how its best piece's cosine joins the chunk's own.

A note chunk holds up to 400 tokens, and its one vector averages all of them: a question about
one finding of an abstract, or one fact of a long page, meets a vector diluted by the rest. Each
note chunk is therefore also embedded piece by piece (its lines; a line longer than LONG_LINE
characters cut into runs of whole sentences; a line shorter than MIN_PIECE characters joined to
the piece before it), and the vector leg scores it (1 - weight) * cosine + weight * the best
piece's cosine. Transcript chunks are a few messages, not a diluted paragraph, and keep their
cosine: measured, the best line of a chat turn lifted the wrong sessions (bench/RESULTS.md,
sessions 19 and 23).
"""

from __future__ import annotations

import re
from typing import Final

from memlane.domain.sources import Source

LONG_LINE: Final = 300  # characters: a longer line is cut at sentence ends
MIN_PIECE: Final = 12  # characters: a shorter line ("Hi!", "---") joins the piece before it
DEFAULT_PIECE_WEIGHT: Final = 0.5  # mix50 of bench/studies/piece_vectors.py
PIECED_SOURCES: Final[frozenset[Source]] = frozenset({"memory"})

_SENTENCE_END: Final = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])")


def has_pieces(source: Source) -> bool:
    return source in PIECED_SOURCES


def note_pieces(text: str) -> list[str]:
    """The pieces of a note chunk's text, in order; [text] when it has no non-blank line."""
    out: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        for part in [line] if len(line) <= LONG_LINE else _sentence_runs(line):
            if out and len(part) < MIN_PIECE:
                out[-1] = f"{out[-1]} {part}"
            else:
                out.append(part)
    return out or [text]


def _sentence_runs(line: str) -> list[str]:
    """Whole sentences grouped into runs under LONG_LINE characters (one sentence may be more)."""
    runs: list[str] = []
    for sentence in (s.strip() for s in _SENTENCE_END.split(line)):
        if not sentence:
            continue
        if runs and len(runs[-1]) + len(sentence) < LONG_LINE:
            runs[-1] = f"{runs[-1]} {sentence}"
        else:
            runs.append(sentence)
    return runs


def pieced_score(cosine: float, best: float | None, weight: float) -> float:
    """The vector leg's score of a chunk: its cosine mixed with its best piece's."""
    if best is None or weight <= 0.0:
        return cosine
    return (1.0 - weight) * cosine + weight * best
