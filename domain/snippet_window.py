"""Domain: where in a long chunk its snippet starts (snippets.focused_snippet cuts it there).

The window of `room` characters is chosen among the starts a reader expects (a line's start;
inside a long line, the sentence or word before a term) by the number of distinct query terms
it shows, then by how well it centres them, then by coming first; a window the chunk's end
would leave half empty moves back to fill it. One pass over the starts with a sliding count,
so a 100 KB chunk (chunking.tokens has no upper bound) costs milliseconds, not seconds.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from typing import Final, TypeAlias

# (start, end, term index) of one occurrence of a query term in the chunk.
Place: TypeAlias = tuple[int, int, int]

# How far before an occurrence inside a long line a snippet may start, to show its sentence.
_LEAD: Final = 160


def term_places(text: str, terms: Sequence[str]) -> list[Place]:
    """Every occurrence of the terms in `text`, in text order. A Latin word matches at a word's
    start, by its first letters when long ("deploying" ~ "deployed", as the stemmer matches);
    other terms (CJK bigrams) anywhere."""
    places: list[Place] = []
    for index, term in enumerate(dict.fromkeys(t for t in terms if t.strip())):
        if term.isascii() and term.isalnum():
            stem = term[: max(5, len(term) - 3)] if len(term) >= 6 else term
            tail = "" if stem != term else r"(?![^\W_])"
            pattern = re.compile(rf"(?<![^\W_]){re.escape(stem)}{tail}", re.IGNORECASE)
        else:
            pattern = re.compile(re.escape(term), re.IGNORECASE)
        places.extend((m.start(), m.end(), index) for m in pattern.finditer(text))
    places.sort()
    return places


def best_start(text: str, places: Sequence[Place], room: int) -> int:
    """Where the window of `room` characters showing the most distinct terms starts (0: the
    chunk's head, which wins ties, so a hit found by meaning alone keeps it)."""
    if not places:
        return 0
    starts = sorted({0, *_window_starts(text, places)})
    by_end = sorted(range(len(places)), key=lambda i: places[i][1])
    counts: dict[int, int] = {}
    shown = [False] * len(places)
    gone = [False] * len(places)
    low = high = 0
    best, best_key = 0, (-1, 0.0)
    for start in starts:
        while low < len(places) and places[low][0] < start:  # begins before the window
            gone[low] = True
            if shown[low]:
                _count(counts, places[low][2], -1)
            low += 1
        while high < len(by_end) and places[by_end[high]][1] <= start + room:  # ends inside
            index = by_end[high]
            if not gone[index]:
                shown[index] = True
                _count(counts, places[index][2], +1)
            high += 1
        centring = math.inf if start == 0 else -_off_centre(places, by_end, low, high, start, room)
        key = (len(counts), centring)
        if key > best_key:
            best, best_key = start, key
    return _filled(text, best, room)


def _count(counts: dict[int, int], term: int, step: int) -> None:
    counts[term] = counts.get(term, 0) + step
    if counts[term] == 0:
        del counts[term]


def _off_centre(
    places: Sequence[Place], by_end: Sequence[int], low: int, high: int, start: int, room: int
) -> float:
    """How far the middle of the terms shown is from the middle of the window, near enough:
    the first shown in text order and the last to end."""
    if low >= len(places) or high == 0 or by_end[high - 1] < low:
        return 0.0
    first, last = places[low], places[by_end[high - 1]]
    middle = (first[0] + last[1]) / 2
    return abs(middle - (start + room / 2))


def _filled(text: str, start: int, room: int) -> int:
    """`start`, moved back so the window reaches the chunk's end (a term near the end made a
    half-empty snippet), to the line or word that starts there; never before 0."""
    if start == 0 or len(text) - start >= room:
        return start
    earliest = max(0, len(text) - room)
    if earliest == 0:
        return 0
    line = text.find("\n", earliest - 1, start)
    if line >= 0:
        return line + 1
    space = text.find(" ", earliest, start)
    return space + 1 if space >= 0 else start


def _window_starts(text: str, places: Sequence[Place]) -> Iterator[int]:
    """Where a snippet may start: each line's start, and inside a long line the sentence (or
    the word) before an occurrence."""
    line_start = 0
    for line in text.splitlines(keepends=True):
        if line_start:
            yield line_start
        line_start += len(line)
    for begin, _, _ in places:
        line_begin = text.rfind("\n", 0, begin) + 1
        if begin - line_begin <= _LEAD:
            continue  # the line's start is a candidate already
        lead = begin - _LEAD
        sentence = max(text.rfind(". ", lead, begin), text.rfind("。", lead, begin))
        if sentence >= 0:
            yield sentence + (1 if text[sentence] == "。" else 2)
            continue
        space = text.rfind(" ", begin - _LEAD // 2, begin)
        yield space + 1 if space >= 0 else begin
