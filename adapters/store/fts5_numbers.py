"""Adapter plumbing: FTS5's numbers as its bm25 sees them, read from outside FTS5.

`keyword_search` recomputes FTS5's bm25 exactly; these helpers give it the inputs: SQLite
varints (FTS5's averages and docsize records), each row's token count from the docsize table,
and what the index's tokenizer makes of a text (a private in-memory FTS5 table, so the tokens
are FTS5's own, porter stemming and CJK n-grams included).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import sqlean
from sqlalchemy import Connection

from memlane.adapters.store import schema
from memlane.adapters.store.in_lists import batches, placeholders
from memlane.domain.keywords import FTS_TOKENIZER


def read_varint(data: bytes, at: int) -> tuple[int, int]:
    """Decode one SQLite varint (FTS5's record format) at `at`; return (value, next offset)."""
    value = 0
    for i in range(8):
        byte = data[at + i]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + i + 1
    return (value << 8) | data[at + 8], at + 9


class Tokenizer:
    """A private in-memory FTS5 table with the index's tokenizer: what FTS5 makes of a text."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn: Any = None

    def _connection(self) -> Any:
        if self._conn is None:
            conn = sqlean.connect(":memory:", check_same_thread=False)
            quoted = FTS_TOKENIZER.replace("'", "''")
            conn.execute(
                f"CREATE VIRTUAL TABLE t USING fts5(terms, content='', tokenize='{quoted}')"
            )
            conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
            self._conn = conn
        return self._conn

    def positions(
        self, docs: Sequence[tuple[int, str]], terms: Sequence[str] | None
    ) -> dict[int, dict[str, list[int]]]:
        """Tokenize (rowid, text) pairs; return rowid -> token -> offsets (only `terms`, or all)."""
        out: dict[int, dict[str, list[int]]] = {rowid: {} for rowid, _ in docs}
        with self._lock:
            conn = self._connection()
            conn.execute("INSERT INTO t(t) VALUES ('delete-all')")
            conn.executemany("INSERT INTO t(rowid, terms) VALUES (?, ?)", docs)
            if terms is None:
                found = conn.execute("SELECT term, doc, offset FROM v").fetchall()
            else:
                found = [
                    row
                    for term in terms
                    for row in conn.execute(
                        "SELECT term, doc, offset FROM v WHERE term = ?", (term,)
                    )
                ]
            conn.execute("INSERT INTO t(t) VALUES ('delete-all')")
        for term, doc, offset in found:
            out[int(doc)].setdefault(str(term), []).append(int(offset))
        return out


def phrase_count(positions: dict[str, list[int]], tokens: tuple[str, ...]) -> int:
    """Instances of a phrase in one row: offsets p with tokens[j] at p + j for every j."""
    first = positions.get(tokens[0])
    if not first:
        return 0
    if len(tokens) == 1:
        return len(first)
    rest = [set(positions.get(token, ())) for token in tokens[1:]]
    return sum(all(p + j + 1 in s for j, s in enumerate(rest)) for p in first)


def doc_lengths(conn: Connection, rids: Sequence[int]) -> dict[int, int]:
    """Token count of each row, from FTS5's docsize table (what bm25 uses as D)."""
    out: dict[int, int] = {}
    for batch in batches(rids):
        for rid, blob in conn.exec_driver_sql(
            f"SELECT id, sz FROM {schema.FTS_TABLE}_docsize "
            f"WHERE id IN ({placeholders(len(batch))})",
            tuple(batch),
        ):
            out[int(rid)] = read_varint(bytes(blob), 0)[0]
    return out
