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
import unicodedata
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


_ZWJ: Final = "\u200d"
_REGIONAL_INDICATORS: Final = ("\U0001f1e6", "\U0001f1ff")


def _extends(char: str) -> bool:
    """Whether `char` belongs to the character before it: a combining mark, a variation selector,
    a skin-tone modifier, an emoji tag, a keycap, or a Hangul vowel or final consonant jamo."""
    code = ord(char)
    return (
        unicodedata.category(char) in ("Mn", "Me", "Mc")
        or 0xFE00 <= code <= 0xFE0F
        or 0x1F3FB <= code <= 0x1F3FF
        or 0xE0020 <= code <= 0xE007F
        or 0xE0100 <= code <= 0xE01EF
        or 0x1160 <= code <= 0x11FF
        or 0xD7B0 <= code <= 0xD7FF
    )


def _regional(char: str) -> bool:
    return _REGIONAL_INDICATORS[0] <= char <= _REGIONAL_INDICATORS[1]


def splits_cluster(text: str, position: int) -> bool:
    """Whether a cut before `text[position]` splits what a reader sees as one character: an
    emoji joined by ZWJ (a family, a profession with a skin tone), a flag (a pair of regional
    indicators), a letter and its accents. Each half of such a cut shows a different symbol."""
    if not 0 < position < len(text):
        return False
    before, after = text[position - 1], text[position]
    if _ZWJ in (before, after) or _extends(after):
        return True
    if _regional(before) and _regional(after):
        run = 0  # flags pair up from the start of a run of indicators
        while position - run - 1 >= 0 and _regional(text[position - run - 1]):
            run += 1
        return run % 2 == 1
    return False
