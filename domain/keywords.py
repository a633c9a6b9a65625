"""Domain: keyword search terms, FTS5 query construction and index-side text expansion.

PLACEHOLDER being completed: see issue #2 (query analysis).
"""

from __future__ import annotations

from typing import Final

# Tokenizer of the FTS5 table; `fts_document` and `build_fts_query` are written for it.
FTS_TOKENIZER: Final = "unicode61 remove_diacritics 2"


def fts_document(text: str) -> str:
    """Return the text to store in the FTS5 column for a chunk's `text`."""
    return text
