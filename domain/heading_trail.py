"""Domain: the headings above a note's chunk, read with its text by the model and keyword index.

A note cut into chunks loses its title and section names after the first chunk: the second
chunk of a paper's abstract no longer says which paper it is from, the third of a project note
no longer names the project. The chunk's own text (and so what a hit shows, with its line
numbers) stays as it is; what the model embeds and the keyword index analyses is the trail of
headings above the chunk, one line each, outermost first, then the chunk. SciFact with the
bundled model (bench/RESULTS.md, session 17): vector nDCG@10 0.617 -> 0.641; the trail in the
vector leg alone took hybrid 0.722 -> 0.718 (the legs then favoured different chunks of one
paper), in both legs 0.722 -> 0.725.

Only the headings the chunk does not hold itself count: the nearest one of each level above its
first line, where a heading closes every deeper level before it, and a chunk that opens with a
heading of level L keeps only the levels above L. Which lines are headings is markdown_blocks.py's
call (ATX and setext headings, none inside code fences); a heading is named by its first line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

# A heading line is cut to this many characters and the trail to this many (innermost headings
# kept first), so the trail never crowds the chunk out of the model's 512-token window.
HEADING_CHARS: Final = 160
TRAIL_CHARS: Final = 320


class TrailReader:
    """Reads a note's lines once, in order, and tells the heading trail above each chunk."""

    def __init__(self, lines: Sequence[str], levels: Sequence[int]) -> None:
        """`levels` is each line's heading level (markdown_blocks.heading_levels), as the chunker
        saw it."""
        self._lines = lines
        self._levels = levels
        self._open: dict[int, str] = {}  # level -> heading line, over the lines read so far
        self._read = 0

    def above(self, start: int) -> str:
        """The trail of a chunk whose first line is the 0-based `start` ("" when it has none).

        Calls must come in non-decreasing `start` order (the order chunks are made in).
        """
        for index in range(self._read, start):
            level = self._levels[index]
            if level:
                self._open = {k: v for k, v in self._open.items() if k < level}
                self._open[level] = self._lines[index].strip()[:HEADING_CHARS]
        self._read = max(self._read, start)
        own = self._levels[start] if start < len(self._levels) else 0
        return _fit([self._open[k] for k in sorted(self._open) if not own or k < own])


def _fit(above: Sequence[str]) -> str:
    kept: list[str] = []
    used = 0
    for heading in reversed(above):  # the innermost heading names the chunk's section best
        if used + len(heading) + 1 > TRAIL_CHARS:
            break
        kept.append(heading)
        used += len(heading) + 1
    return "\n".join(reversed(kept))


def indexed_text(context: str, text: str) -> str:
    """What the indexes read of a chunk (the model, the keyword analysis): its heading trail, a
    newline and its text."""
    return f"{context}\n{text}" if context else text
