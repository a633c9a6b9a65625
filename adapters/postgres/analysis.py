"""Adapter plumbing: the keyword leg's analysis, identical to the SQLite store's by construction.

The SQLite store indexes `domain.keywords.fts_document(text)` with FTS5's tokenizer
`domain.keywords.FTS_TOKENIZER` (porter stemming over unicode61 with diacritics removed) and
ranks with FTS5's bm25(). To give the same ranking, this store must see the very same tokens.
Rewriting FTS5's porter stemmer and unicode61 folding in Python would be a second
implementation to keep in step, and any difference would silently change rankings; so the
tokens are taken from FTS5 itself, in an in-memory SQLite database (an `fts5vocab` table in
'instance' mode lists every token of every row with its position). SQLite is in-process and
already a dependency; no file is written.

`parse_match` accepts the subset of FTS5 query syntax that `domain.keywords.build_fts_query`
produces: phrases (double-quoted strings, `""` escaping a quote, or barewords) joined by OR.
Anything else (AND, NOT, NEAR, parentheses, column filters, prefix `*`) is refused with None,
which the store turns into [] as the port prescribes for expressions it cannot run.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Final

import sqlean

from memlane.domain.keywords import FTS_TOKENIZER, fts_document

# FTS5 barewords: runs of ASCII letters, digits and '_' or any non-ASCII character.
_BAREWORD: Final = re.compile(r"[A-Za-z0-9_\x80-\U0010ffff]+")
_RESERVED: Final = frozenset({"AND", "NOT", "NEAR"})


class Fts5Analyser:
    """Tokenises texts exactly as the SQLite store's FTS5 table does (thread-safe)."""

    def __init__(self, tokenizer: str = FTS_TOKENIZER) -> None:
        """Create the in-memory FTS5 table for `tokenizer`."""
        self._lock = threading.Lock()
        self._conn = sqlean.connect(":memory:", check_same_thread=False)
        quoted = tokenizer.replace("'", "''")
        self._conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(terms, tokenize='{quoted}')")
        self._conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")

    def tokens(self, texts: Sequence[str]) -> list[list[str]]:
        """Return the token sequence FTS5 indexes for each of `texts` (already analysed)."""
        if not texts:
            return []
        result: list[list[str]] = [[] for _ in texts]
        with self._lock:
            try:
                self._conn.executemany(
                    "INSERT INTO t(rowid, terms) VALUES (?, ?)",
                    [(i + 1, text) for i, text in enumerate(texts)],
                )
                for term, doc in self._conn.execute("SELECT term, doc FROM v ORDER BY doc, offset"):
                    result[int(doc) - 1].append(str(term))
            finally:
                self._conn.execute("DELETE FROM t")
        return result

    def document_tokens(self, texts: Sequence[str]) -> list[list[str]]:
        """Return the indexed tokens of chunk texts (`fts_document`, then FTS5's tokenizer)."""
        return self.tokens([fts_document(text) for text in texts])

    def close(self) -> None:
        """Close the in-memory database."""
        self._conn.close()


def parse_match(match: str) -> list[str] | None:
    """Return the phrases of an OR-of-phrases MATCH expression, or None for other syntax."""
    phrases: list[str] = []
    i, n = 0, len(match)
    expect_phrase = True
    while True:
        while i < n and match[i].isspace():
            i += 1
        if i >= n:
            break
        if expect_phrase:
            if match[i] == '"':
                end = i + 1
                text: list[str] = []
                while True:
                    close = match.find('"', end)
                    if close < 0:
                        return None
                    text.append(match[end:close])
                    if close + 1 < n and match[close + 1] == '"':
                        text.append('"')
                        end = close + 2
                        continue
                    i = close + 1
                    break
                phrases.append("".join(text))
            else:
                word = _BAREWORD.match(match, i)
                if word is None or word.group() in _RESERVED:
                    return None
                phrases.append(word.group())
                i = word.end()
            expect_phrase = False
        else:
            word = _BAREWORD.match(match, i)
            if word is None or word.group() != "OR":
                return None
            i = word.end()
            expect_phrase = True
    if expect_phrase:
        return None
    return phrases
