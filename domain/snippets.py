"""Domain: search-result snippets and `path#Lstart-Lend` citations for agent tools."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Final

from memlane.domain.snippet_window import best_start, term_places

DEFAULT_SNIPPET_LIMIT: Final = 700
# How far back a cut may move to end at a space: a word is rarely longer, and a text without
# spaces (CJK) keeps its character cut instead of losing a large tail.
_WORD_BACKTRACK: Final = 40


def focused_snippet(text: str, terms: Sequence[str], limit: int = DEFAULT_SNIPPET_LIMIT) -> str:
    """The snippet of a chunk longer than `limit`, placed where the query's `terms` are.

    A chunk holds ~1,600 characters and a snippet 700, so the line a question is about was often
    cut off while its chunk ranked first: an agent answers from the snippet. The snippet now
    starts at the line (or, inside one long line, the word) from which `limit` characters hold
    the most distinct terms, and stays at the chunk's start when it holds as many (a hit found
    by meaning alone keeps its head). Text left out at either end is marked with "…". Terms are
    the keyword search's (lower-case words, CJK bigrams): a Latin word matches at a word's
    start, by its first letters when long ("deploying" ~ "deployed", as the stemmer matches).
    Without terms, or with none in the text, the snippet is the chunk's head.
    """
    if limit <= _MARKS_WIDTH or len(text.rstrip()) <= limit:
        return make_snippet(text, limit)
    # Judged on what surely shows: the marks and a cut moved back to a space take some room.
    room = max(1, limit - _MARKS_WIDTH - _WORD_BACKTRACK)
    best = best_start(text, term_places(text, terms), room)
    if best == 0:
        return _marked_end(text, make_snippet(text, limit - 2))
    body = make_snippet(text[best:], limit - 4)
    return "… " + _marked_end(text[best:], body)


_MARKS_WIDTH: Final = 4  # "… " before and " …" after


def _marked_end(text: str, snippet: str) -> str:
    return snippet if len(snippet) >= len(text.rstrip()) else f"{snippet} …"


def make_snippet(text: str, limit: int = DEFAULT_SNIPPET_LIMIT) -> str:
    """At most `limit` code points of `text`, cut at a word or character boundary.

    A cut inside a word moves back to the space before it (at most 40 code points back, so
    text without spaces keeps its character cut); a cut never splits what a reader sees as one
    character (`_joined`): a letter and its marks, an emoji and its modifier, variation
    selector or ZWJ-joined emoji, a flag's two letters, a Hangul syllable's jamo, nor the halves
    of a surrogate pair. Python strings hold an emoji as one code point; the pair case arises
    only for text carrying raw surrogates (e.g. UTF-16 decoded with "surrogatepass", or built
    from escapes).
    """
    if limit <= 0:
        return ""
    if len(text) <= limit:
        return text
    end = limit
    while end > 0 and _joined(text, end):
        end -= 1
    if end > 0 and _in_word(text[end - 1]) and _in_word(text[end]):
        space = max(text.rfind(" ", 0, end), text.rfind("\n", 0, end))
        if space > 0 and end - space <= _WORD_BACKTRACK:
            end = space
    return text[:end].rstrip(" \n\t")


# Code points that belong to the character before them (UAX #29's Extend, and SpacingMark,
# by general category and the emoji ranges outside the mark categories).
_MARKS: Final = frozenset({"Mn", "Mc", "Me"})
_ZWJ: Final = "\u200d"
_JOINERS: Final = frozenset({_ZWJ, "\u200c"})  # zero-width joiner and non-joiner
_EMOJI_MODIFIERS: Final = ("\U0001f3fb", "\U0001f3ff")  # skin tones
_TAGS: Final = ("\U000e0020", "\U000e007f")  # the letters of a subdivision flag (🏴 + tags)
_REGIONAL: Final = ("\U0001f1e6", "\U0001f1ff")  # two of them make a country's flag
_HANGUL_LEADING: Final = ("\u1100", "\u115f")
_HANGUL_FOLLOWING: Final = (("\u1160", "\u11ff"), ("\ud7b0", "\ud7ff"))  # vowels, finals


def _within(char: str, bounds: tuple[str, str]) -> bool:
    return bounds[0] <= char <= bounds[1]


def _joined(text: str, cut: int) -> bool:
    """Whether `text[cut - 1]` and `text[cut]` belong to one user-perceived character.

    A close reading of Unicode's grapheme cluster rules (UAX #29) for the cases text shows:
    enough to keep a snippet from ending in half an emoji or half a letter.
    """
    before, after = text[cut - 1], text[cut]
    if _within(before, ("\ud800", "\udbff")) and _within(after, ("\udc00", "\udfff")):
        return True  # a raw surrogate pair
    if before == "\r" and after == "\n":
        return True
    if (
        after in _JOINERS
        or unicodedata.category(after) in _MARKS  # combining, spacing and enclosing marks
        or _within(after, _EMOJI_MODIFIERS)
        or _within(after, _TAGS)
    ):
        return True
    if before == _ZWJ:
        return True  # ZWJ sequences: 👨‍👩‍👧 is one character
    if _within(after, _REGIONAL) and _within(before, _REGIONAL):
        run = 0  # regional indicators pair up from the start of their run
        while cut - 1 - run >= 0 and _within(text[cut - 1 - run], _REGIONAL):
            run += 1
        return run % 2 == 1
    if _within(before, _HANGUL_LEADING):
        return _within(after, _HANGUL_LEADING) or any(_within(after, b) for b in _HANGUL_FOLLOWING)
    return any(_within(after, b) for b in _HANGUL_FOLLOWING) and (
        any(_within(before, b) for b in _HANGUL_FOLLOWING)
        or _within(before, ("\uac00", "\ud7a3"))  # a precomposed syllable takes vowels, finals
    )


def _in_word(char: str) -> bool:
    """A letter, digit or mark of a space-separated script (CJK characters are words alone)."""
    if not (char.isalnum() or unicodedata.combining(char)):
        return False
    return unicodedata.east_asian_width(char) not in ("W", "F")


def citation_for(path: str, start_line: int, end_line: int) -> str:
    """`path#L5` for a single line, else `path#L5-L9`."""
    if end_line <= start_line:
        return f"{path}#L{start_line}"
    return f"{path}#L{start_line}-L{end_line}"
