"""Domain: search-result snippets and `path#Lstart-Lend` citations for agent tools."""

from __future__ import annotations

import unicodedata
from typing import Final

DEFAULT_SNIPPET_LIMIT: Final = 700
# How far back a cut may move to end at a space: a word is rarely longer, and a text without
# spaces (CJK) keeps its character cut instead of losing a large tail.
_WORD_BACKTRACK: Final = 40


def make_snippet(text: str, limit: int = DEFAULT_SNIPPET_LIMIT) -> str:
    """At most `limit` code points of `text`, cut at a word or character boundary.

    A cut inside a word moves back to the space before it (at most 40 code points back, so
    text without spaces keeps its character cut); a cut never separates a character from its
    combining marks, nor the halves of a surrogate pair. Python strings hold an emoji as one
    code point; the pair case arises only for text carrying raw surrogates (e.g. UTF-16 decoded
    with "surrogatepass", or built from escapes).
    """
    if limit <= 0:
        return ""
    if len(text) <= limit:
        return text
    end = limit
    if "\ud800" <= text[end - 1] <= "\udbff" and "\udc00" <= text[end] <= "\udfff":
        end -= 1
    while end > 0 and unicodedata.combining(text[end]):
        end -= 1  # the marks belong to the character before them
    if end > 0 and _in_word(text[end - 1]) and _in_word(text[end]):
        space = max(text.rfind(" ", 0, end), text.rfind("\n", 0, end))
        if space > 0 and end - space <= _WORD_BACKTRACK:
            end = space
    return text[:end].rstrip(" \n\t")


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
