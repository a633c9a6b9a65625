"""Domain: where a line too long for one chunk may be cut.

A paragraph written on one line (an abstract, a long chat message) used to be cut at exactly the
budget, often inside a word, so both halves carried a broken word and the second half started
mid-sentence. The chunker now cuts such a line between sentences, or between words when one
sentence alone is too long, and only inside a word when a word alone is too long.

Each function returns pieces whose concatenation is its input, every piece keeping the
whitespace that follows it, so a chunk's text still reproduces the file's characters.
"""

from __future__ import annotations

import re
from typing import Final

# A sentence ends at ., ! or ? (a run of them, then closing quotes or brackets) followed by
# whitespace, or at a full-width 。！？ (whitespace optional: CJK text has none between sentences).
_SENTENCE_END: Final = re.compile(r"[.!?]+[\"'”’)\]]*\s+|[。！？]+[」』”’）)\"']*\s*")
# Inside one sentence: after a run of whitespace, or after CJK clause punctuation.
_WORD_END: Final = re.compile(r"\s+|[、，；：]\s*")


def _cut_after(pattern: re.Pattern[str], text: str) -> list[str]:
    pieces: list[str] = []
    start = 0
    for match in pattern.finditer(text):
        end = match.end()
        if end > start and end < len(text):
            pieces.append(text[start:end])
            start = end
    pieces.append(text[start:])
    return pieces


def sentences(line: str) -> list[str]:
    """The line's sentences, each with the whitespace after it."""
    return _cut_after(_SENTENCE_END, line)


def words(text: str) -> list[str]:
    """The text's words (or CJK clauses), each with the whitespace after it."""
    return _cut_after(_WORD_END, text)
