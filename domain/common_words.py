"""Domain: the words of a question that the memory holds almost everywhere, and the question
without them, which the vector leg embeds.

Why: a word found in most chunks (a speaker's name on every line of a transcript, a project's
name in every note) tells no chunk apart. bm25 gives it next to no weight (its idf); an
embedding cannot, and in a short question such a word pulls the query vector towards every
chunk alike. The vector leg therefore embeds the question without its common words (the keyword
leg keeps them: bm25 weighs them itself). Measured on LoCoMo (a speaker's name on every line)
and every other set in bench/RESULTS.md ("Common words"); embedding both texts and searching with
their mean ranked worse there.

Only whole words of letters and digits are judged (Latin, Cyrillic, Arabic ... script): CJK runs
are searched as n-grams, which are no words to leave out. Stop words are never judged (they are
not searched by keyword and carry the question's grammar). A memory smaller than MIN_CHUNKS
chunks has no shares worth trusting; it is left alone.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Final

from memlane.domain.cjk import HAN, HANGUL, KANA
from memlane.domain.keywords import STOP_WORDS

# Below this many chunks in the keyword index, a word's share of them is too coarse to act on.
MIN_CHUNKS: Final = 50
# At most this many distinct words of a question are looked up (a pasted page is not a question).
MAX_WORDS: Final = 32

_WORD: Final = re.compile(f"(?:(?![{HAN}{KANA}{HANGUL}])[^\\W_])+")
_WORD_OR_POSSESSIVE: Final = re.compile(f"({_WORD.pattern})(?:['’]s\\b)?")


def candidate_words(query: str) -> list[str]:
    """The distinct words of `query` (lowercased, NFKC, in order) whose share of the memory
    could be judged: letters and digits outside CJK scripts, not stop words, not all digits,
    not one letter."""
    words: dict[str, None] = {}
    for match in _WORD.finditer(unicodedata.normalize("NFKC", query).lower()):
        word = match.group(0)
        if word in STOP_WORDS or word.isdigit() or len(word) < 2:  # "m" of "I'm": no topic
            continue
        words.setdefault(word)
        if len(words) >= MAX_WORDS:
            break
    return list(words)


def common_words(
    counts: Mapping[str, int], total: int, *, share: float, min_chunks: int = MIN_CHUNKS
) -> list[str]:
    """The words held by more than `share` of `total` chunks (`counts`: chunks holding each
    word). None when `share` is 0 or off the (0, 1) range, or the memory is too small."""
    if not 0.0 < share < 1.0 or not math.isfinite(share) or total < min_chunks:
        return []
    return [word for word, n in counts.items() if n > share * total]


def without_words(query: str, words: Sequence[str]) -> str | None:
    """`query` with every occurrence of `words` (whole words, any case, with a possessive 's)
    taken out, or None when nothing was taken out or no word but stop words would remain."""
    drop = {w.lower() for w in words}
    if not drop:
        return None
    folded = unicodedata.normalize("NFKC", query)
    removed = 0

    def cut(match: re.Match[str]) -> str:
        nonlocal removed
        if match.group(1).lower() not in drop:
            return match.group(0)
        removed += 1
        return ""

    rest = " ".join(_WORD_OR_POSSESSIVE.sub(cut, folded).split())
    if not removed or not candidate_words(rest):
        return None
    return rest
