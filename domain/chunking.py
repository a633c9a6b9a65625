"""Domain: line-based chunking of notes and rendered transcripts under a token budget.

Improves on the reference system's chunker:
- the budget is measured with `estimate_tokens`, so CJK chunks are not ~4x too large;
- lengths are code points (Python `str`), and a cut inside a long word steps back to keep one
  visible character whole (an emoji ZWJ sequence, a flag, a letter with its accents);
- CRLF and lone CR become LF before splitting (no `\\r` left in chunk text);
- the overlap carried into a chunk never makes it exceed the budget;
- chunks with nothing but whitespace (or nothing new beyond their overlap) are dropped, and
  blank lines at a chunk's edges are left out of it;
- ids include the chunk's ordinal, so identical chunks of one file get distinct ids;
- markdown headings (ATX and setext, outside code fences: markdown_blocks.py) start a chunk when
  that costs at most half a chunk;
- a note's chunk carries the headings above it as `context`, which the indexes read with it;
- a note's line longer than a chunk is cut between sentences (line_pieces.py), not in a word.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from memlane.domain.chunk_times import (
    TimeRange,
    note_chunk_time,
    note_line_times,
    span,
    transcript_line_times,
)
from memlane.domain.chunks import Chunk, ChunkingPolicy
from memlane.domain.cjk import WIDE_CHARACTERS
from memlane.domain.hashing import chunk_id, sha256_text
from memlane.domain.heading_trail import TrailReader, indexed_text
from memlane.domain.line_pieces import sentences, splits_cluster, words
from memlane.domain.markdown_blocks import heading_levels
from memlane.domain.sources import Source

# Cost model, in quarter-tokens ("units"): real tokenizers (cl100k, o200k, e5's sentencepiece)
# spend ~1-1.5 tokens per CJK ideograph, kana or hangul syllable, but ~4 characters per token on
# Latin-script text. So a CJK character costs 4 units and any other code point (including the
# newline joining two lines) costs 1 unit; a text's estimate is ceil(units / 4).
UNITS_PER_TOKEN: Final = 4
CJK_UNITS: Final = 4
OTHER_UNITS: Final = 1
# The reference never lets a chunk budget drop below 32 characters (`max(32, tokens*4)`).
MIN_BUDGET_UNITS: Final = 32

_CJK: Final = re.compile(f"[{WIDE_CHARACTERS}]")


def _units(text: str) -> int:
    cjk = _CJK.subn("", text)[1]
    return cjk * CJK_UNITS + (len(text) - cjk) * OTHER_UNITS


def char_units(char: str) -> int:
    """Estimate units of one character (UNITS_PER_TOKEN units make a token)."""
    return CJK_UNITS if _CJK.match(char) else OTHER_UNITS


def estimate_tokens(text: str) -> int:
    """Cheap token estimate: ~1 token per CJK character, ~4 other characters per token."""
    return math.ceil(_units(text) / UNITS_PER_TOKEN)


@dataclass(frozen=True, slots=True)
class _Segment:
    text: str
    line: int  # 0-based index into the normalised lines
    units: int
    blank: bool
    heading: bool = False  # first piece of a markdown heading line
    joins: bool = False  # a later piece of its line: follows the previous piece with no newline

    @property
    def gap(self) -> int:
        """Units of the separator before this segment when it follows another in a chunk."""
        return 0 if self.joins else OTHER_UNITS


def normalise_newlines(text: str) -> str:
    """CRLF and lone CR as LF: the line ends the chunker numbers lines by, and so `get` too.

    Only these: a form feed, NEL or U+2028 does not end a line in an editor, so it does not
    here (`str.splitlines` would split on them and shift every line number after one).
    """
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _is_high_surrogate(char: str) -> bool:
    return "\ud800" <= char <= "\udbff"


def _heading_cut(buffer: Sequence[_Segment], carried: int, budget: int) -> int | None:
    """Index of the last heading that starts in the second half of a full buffer, if any.

    Cutting there lets the next chunk start with its section's heading instead of ending the
    current chunk with it; the chunk cut short is still at least half the budget.
    """
    cut = None
    before = 0  # units of buffer[:index] joined, plus the newline that follows them
    for index, segment in enumerate(buffer):
        if segment.heading and index > carried and before * 2 >= budget:
            cut = index
        before += segment.units + (buffer[index + 1].gap if index + 1 < len(buffer) else 0)
    return cut


def _hard_cut(text: str, budget: int) -> list[str]:
    """Cut `text` into pieces of at most `budget` units where the budget falls, stepping back
    so a visible character is not cut in two unless it alone fills a piece."""
    pieces: list[str] = []
    start = 0
    used = 0
    for position, char in enumerate(text):
        cost = char_units(char)
        if used + cost > budget and position > start:
            cut = position
            # Keep a (lone-surrogate encoded) pair together unless it alone fills the piece.
            if _is_high_surrogate(text[cut - 1]) and cut - 1 > start:
                cut -= 1
            # Likewise one visible character (an emoji ZWJ sequence, a flag, accents).
            back = cut
            while back > start and splits_cluster(text, back):
                back -= 1
            if back > start:
                cut = back
            pieces.append(text[start:cut])
            start = cut
            used = _units(text[start : position + 1])
        else:
            used += cost
    pieces.append(text[start:])
    return pieces


def _measured(pieces: list[str]) -> list[tuple[str, int]]:
    return [(piece, _units(piece)) for piece in pieces]


def _pieces_of_line(line: str, budget: int) -> list[tuple[str, int]]:
    """A line too long for the budget cut between sentences, else words, else anywhere; each
    piece with its units (measured once: a long line can hold hundreds of thousands)."""
    pieces: list[tuple[str, int]] = []
    for sentence in sentences(line):
        units = _units(sentence)
        if units <= budget:
            pieces.append((sentence, units))
            continue
        for word in words(sentence):
            units = _units(word)
            if units <= budget:
                pieces.append((word, units))
            else:
                pieces.extend(_measured(_hard_cut(word, budget)))
    return pieces


def _segments_of_line(
    line: str, index: int, budget: int, *, heading: bool, sentence_cuts: bool
) -> list[_Segment]:
    """One line as segments of at most `budget` units (an empty line is one empty segment).

    A longer line becomes several segments. With `sentence_cuts` they are its sentences (or
    words), later ones joining the previous with no newline, so the chunks fill up with whole
    sentences and their overlap can carry a sentence over; without, budget-sized pieces.
    """
    units = _units(line)
    if units <= budget:
        return [_Segment(line, index, units, not line.strip(), heading)]
    pieces = _pieces_of_line(line, budget) if sentence_cuts else _measured(_hard_cut(line, budget))
    return [
        _Segment(
            piece,
            index,
            piece_units,
            blank=not piece.strip(),
            heading=heading and n == 0,
            joins=sentence_cuts and n > 0,
        )
        for n, (piece, piece_units) in enumerate(pieces)
    ]


def _joined_units(segments: Sequence[_Segment]) -> int:
    return sum(s.units for s in segments) + sum(s.gap for s in segments[1:])


def _overlap(
    buffer: Sequence[_Segment], overlap: int, budget: int, incoming: _Segment
) -> list[_Segment]:
    """Trailing whole segments worth at most `overlap` units that leave room for `incoming`.

    Part of a line is carried only into the rest of that line: a chunk that starts a new line
    does not open with the tail of the one before (its hit would cite one more line for it).
    """
    kept: list[_Segment] = []
    total = 0
    for segment in reversed(buffer):
        with_segment = segment.units + (kept[-1].gap if kept else 0) + total
        if with_segment > overlap or with_segment + incoming.gap + incoming.units > budget:
            break
        kept.append(segment)
        total = with_segment
    kept.reverse()
    continued = incoming.line if incoming.joins else None
    while kept and kept[0].joins and kept[0].line != continued:
        kept.pop(0)
    return kept


def _headings_at_end(buffer: Sequence[_Segment], carried: int) -> int:
    """Where the headings (and blank lines) that end the buffer start; len(buffer) if none do."""
    start = len(buffer)
    for index in range(len(buffer) - 1, carried - 1, -1):
        if buffer[index].heading:
            start = index
        elif not buffer[index].blank:
            break
    return start


def _map_line(line: int, line_numbers: Sequence[int] | None) -> int:
    if line_numbers is not None and 1 <= line <= len(line_numbers):
        return line_numbers[line - 1]
    return line


def _latest(first: int, last: int, line_timestamps: Sequence[float | None] | None) -> float | None:
    if line_timestamps is None:
        return None
    known = [t for t in line_timestamps[first : last + 1] if t is not None]
    return max(known) if known else None


def chunk_text(
    source: Source,
    path: str,
    text: str,
    policy: ChunkingPolicy,
    *,
    line_numbers: Sequence[int] | None = None,
    line_timestamps: Sequence[float | None] | None = None,
    mtime: float | None = None,
    heading_context: bool = False,
    sentence_cuts: bool = False,
) -> list[Chunk]:
    """Split `text` into chunks of whole lines, each within `policy.tokens` estimated tokens.

    Lines accumulate until the next one would exceed the budget; the next chunk then starts
    with trailing whole lines of the previous one worth at most `policy.overlap` tokens (fewer
    if needed to stay within the budget). A line longer than the budget is cut into pieces.
    When a chunk fills up and a heading starts in its second half, the chunk ends before the
    heading and the next one starts at it; a chunk starting at a heading carries no overlap.
    A final newline does not count as an extra (empty) line, and blank lines at a chunk's
    edges are left out of it.

    Line numbers are 1-based and inclusive; with `line_numbers` (transcripts), text line i is
    reported as `line_numbers[i-1]`. With `line_timestamps`, a chunk's timestamp is the latest
    known timestamp of its lines.

    With the file's `mtime`, every chunk gets its time range (`time_start` / `time_end`,
    chunk_times.py): from the lines' timestamps for transcripts (`line_timestamps` given), else
    from a dated file name or dated headings (a chunk spans its dated lines), else the mtime.

    With `heading_context` (notes), each chunk's `context` is the trail of headings above it
    (heading_trail.py) and its hash covers that trail too.

    With `sentence_cuts` (notes), a line longer than the budget starts a chunk (with the headings
    right above it) and is cut between sentences, else words (line_pieces.py), not at the exact
    budget. Transcripts keep the budget cut: on LongMemEval the sentence cuts moved single
    questions both ways (bench/RESULTS.md, session 20).
    """
    normalised = normalise_newlines(text)
    if not normalised:
        return []
    lines = normalised.split("\n")
    if normalised.endswith("\n"):
        lines.pop()
    budget = max(MIN_BUDGET_UNITS, policy.tokens * UNITS_PER_TOKEN)
    overlap = max(0, policy.overlap * UNITS_PER_TOKEN)
    levels = heading_levels(lines)
    line_times: Sequence[TimeRange | None] | None = None
    if mtime is not None:
        line_times = (
            transcript_line_times(line_timestamps, mtime)
            if line_timestamps is not None
            else note_line_times(lines, path, levels)
        )

    chunks: list[Chunk] = []
    trail = TrailReader(lines, levels) if heading_context else None

    def flush(buffer: Sequence[_Segment], carried: int) -> None:
        if all(s.blank for s in buffer[carried:]):
            return  # nothing new beyond the overlap: the previous chunk already holds it
        # Blank lines at either edge are left out, so the line range cites only content.
        first_kept = next(i for i, s in enumerate(buffer) if not s.blank)
        last_kept = next(i for i in range(len(buffer) - 1, -1, -1) if not buffer[i].blank)
        kept = buffer[first_kept : last_kept + 1]
        body = kept[0].text + "".join(("" if s.joins else "\n") + s.text for s in kept[1:])
        start = kept[0].line + 1
        end = kept[-1].line + 1
        context = "" if trail is None else trail.above(kept[0].line)
        content_hash = sha256_text(indexed_text(context, body))
        first, last = _map_line(start, line_numbers), _map_line(end, line_numbers)
        times = None
        if line_times is not None and mtime is not None:
            if line_timestamps is not None:  # a transcript: every line has a time
                times = span(line_times[start - 1 : end]) or (mtime, mtime)
            else:
                window = slice(start - 1, end)
                times = note_chunk_time(lines[window], levels[window], line_times[window], mtime)
        chunks.append(
            Chunk(
                id=chunk_id(source, path, first, last, content_hash, len(chunks)),
                source=source,
                path=path,
                start_line=first,
                end_line=last,
                text=body,
                hash=content_hash,
                timestamp=_latest(start - 1, end - 1, line_timestamps),
                time_start=None if times is None else times[0],
                time_end=None if times is None else times[1],
                context=context,
            )
        )

    buffer: list[_Segment] = []
    used = 0  # units of the buffer's segments joined (newlines between lines)
    carried = 0  # how many leading segments of `buffer` repeat the previous chunk
    for index, line in enumerate(lines):
        segments = _segments_of_line(
            line, index, budget, heading=levels[index] > 0, sentence_cuts=sentence_cuts
        )
        if sentence_cuts and len(segments) > 1 and buffer:
            # A line too long for one chunk starts one, as a section does, taking along the
            # headings right above it; packing its first sentences behind earlier lines would
            # make those hits cite lines they barely hold.
            keep = _headings_at_end(buffer, carried)
            if any(not s.blank for s in buffer[carried:keep]):
                flush(buffer[:keep], carried)
            buffer, carried = buffer[keep:], 0
            used = _joined_units(buffer)
        for segment in segments:
            if buffer and used + segment.gap + segment.units > budget:
                cut = None if segment.heading else _heading_cut(buffer, carried, budget)
                if cut is not None:  # the buffer's last section moves on to the next chunk
                    flush(buffer[:cut], carried)
                    buffer, carried = buffer[cut:], 0
                    used = _joined_units(buffer)
                if used + segment.gap + segment.units > budget:
                    flush(buffer, carried)
                    # A new section starts without overlap: the previous section's tail is noise.
                    buffer = [] if segment.heading else _overlap(buffer, overlap, budget, segment)
                    used = _joined_units(buffer)
                    carried = len(buffer)
            used += segment.units + (segment.gap if buffer else 0)
            buffer.append(segment)
    if buffer:
        flush(buffer, carried)
    return chunks
