"""Domain: the words inside camelCase identifiers, as keyword terms.

An agent's notes name code: `relevanceFloor`, `maxResults`, `getUserProfile`, `JavaScript`.
FTS5's `unicode61` keeps such a name one token (it splits `snake_case`, `kebab-case` and
`dotted.names` at their marks, but a change of letter case is no mark), so a question in words,
"the relevance floor", never met it, and a question naming it never met the notes that wrote its
words apart. The keyword index therefore holds each identifier's words after the text, besides
the whole name, and a query's identifiers bring their words as extra terms of the MATCH.

A name is cut only where a lower-case letter or a digit meets an upper-case letter, and only
when two of its pieces have three characters or more. Shorter pieces are more often an
abbreviation's letters than words: `iPhone`, `mRNA`, `HbA1c`, `NFkB`, `McDonald` and `setUp` stay
whole, as do all-capital names and lower-case words. ASCII only: mixed case inside a word is a
code convention of Latin letters, and other scripts keep their analysis unchanged.
"""

from __future__ import annotations

import re
from typing import Final

# A run of ASCII letters and digits with a lower-case letter, where a lower-case letter or a
# digit meets an upper-case one (`base64Encode`; all-capital codes such as `ABC123DEF` stay
# whole). The neighbours are checked by hand: `\b` counts "_" as a letter (`my_relevanceFloor`).
_IDENTIFIER: Final = re.compile(
    r"(?<![A-Za-z0-9])(?=[A-Za-z0-9]*[a-z])[A-Za-z0-9]*[a-z0-9][A-Z][A-Za-z0-9]*(?![A-Za-z0-9])"
)
_CUT: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_MIN_PIECE: Final = 3


def identifier_pieces(text: str) -> list[str]:
    """The words of each camelCase identifier in `text`, in order, as written (duplicates kept:
    each occurrence counts towards the term's frequency, as the whole name's does)."""
    pieces: list[str] = []
    for match in _IDENTIFIER.finditer(text):
        kept = [p for p in _CUT.split(match.group()) if len(p) >= _MIN_PIECE]
        if len(kept) >= 2:
            pieces += kept
    return pieces
