"""Adapter plumbing: the keyword leg's top-k, the same ranking as FTS5's, without its tail.

Why: `... MATCH '"a" OR "b"' ORDER BY rank LIMIT k` makes FTS5 compute bm25 for EVERY row that
matches any OR-ed phrase and sort them (no early exit), so a query is as slow as its commonest
term is common (a query holding a word found in every chunk ranks every chunk; the OR of many
CJK n-grams is the same case). Restricting FTS5's own bm25 to a set of rowids does not help:
each `rowid IN (...)` value is a new scan of the table that recomputes every phrase's document
frequency.

How (MaxScore, exact):

* FTS5's bm25 of a row is  -sum_i idf_i * tf_i * (k1 + 1) / (tf_i + k1 * (1 - b + b * D / avgdl))
  over the query's phrases, idf_i = log((N - n_i + 0.5) / (n_i + 0.5)) (clamped at 1e-6), n_i
  the rows matching phrase i, N the rows, avgdl the mean row length, D the row's length. Each
  term is below its upper bound idf_i * (k1 + 1), whatever tf and D.
* Phrases are taken rarest first (largest bound). The rows matching the taken ("essential")
  phrases are scored exactly; once the k-th best of those beats the sum of the bounds of the
  phrases not taken, no row matching only those can enter the top k, and they are never read.
* The exact scores are computed here with FTS5's formula, in its operation order, from FTS5's
  own numbers: N and the token total from the table's averages record, n_i from an fts5vocab
  table (or a count of the phrase's matches), D from the docsize table, tf_i by tokenizing the
  candidates' keyword documents with the same tokenizer in a private in-memory FTS5 table. The
  tests compare scores and order with FTS5's (float equality) on random corpora with deletions.
* Anything this path does not model (an expression that is not an OR of quoted phrases, an
  empty phrase, a row whose re-tokenized length differs from FTS5's, too many candidates) runs
  the plain FTS5 query instead, so the answer is always FTS5's ranking, ties by rowid.

Document frequencies of common terms cost a scan of their posting lists; they are cached per
process, keyed by the FTS5 index's averages and structure records (which change with every
write), so a warm process pays them once per index version.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from sqlalchemy import Connection

from memlane.adapters.store import rows, schema
from memlane.adapters.store.fts5_numbers import Tokenizer, doc_lengths, phrase_count, read_varint
from memlane.adapters.store.in_lists import batches, placeholders
from memlane.domain.keywords import fts_document
from memlane.domain.sources import Source

# The constants and the idf floor of SQLite's built-in bm25() (FTS5).
_K1: Final = 1.2
_B: Final = 0.75
_IDF_FLOOR: Final = 1e-6
# FTS5's reserved %_data rows: the averages record (row count, token totals) and the structure.
_AVERAGES_ID: Final = 1
_STRUCTURE_ID: Final = 10
# Scoring a row here (its text read, re-tokenized, summed in Python) costs about 40 times what
# FTS5 spends ranking one (measured at 100k and 1M chunks): the pruned path is taken only while
# its candidate rows stay under 1/COST_RATIO of the rows FTS5 would rank (at most the sum of
# the phrases' counts), and under MAX_CANDIDATES in any case.
COST_RATIO: Final = 40
MAX_CANDIDATES: Final = 5_000
# Margin on the bound comparison, so that float rounding of the bound sum can never prune a
# row whose score ties the k-th.
_BOUND_MARGIN: Final = 1e-9
_CACHE_LIMIT: Final = 4096
_PHRASE: Final = re.compile(r'"((?:[^"]|"")*)"')
_OR_OF_PHRASES: Final = re.compile(r'\s*"(?:[^"]|"")*"(?:\s+OR\s+"(?:[^"]|"")*")*\s*')
_VOCAB_TABLE: Final = "temp.memlane_fts_vocab"


def parse_phrases(match: str) -> list[str] | None:
    """Return the phrases of a MATCH expression made only of OR-ed quoted strings, else None."""
    if not _OR_OF_PHRASES.fullmatch(match):
        return None
    return [body.replace('""', '"') for body in _PHRASE.findall(match)]


@dataclass(frozen=True)
class _Phrase:
    index: int
    text: str
    tokens: tuple[str, ...]
    idf: float
    hits: int  # rows matching the phrase (FTS5's n_i)

    @property
    def bound(self) -> float:
        return self.idf * (_K1 + 1.0)


class KeywordSearch:
    """The keyword leg's top-k, pruned; per store, holding its caches (see the module doc)."""

    def __init__(self) -> None:
        self._tokenizer = Tokenizer()
        self._tokens: dict[str, tuple[str, ...]] = {}
        self._lock = threading.Lock()
        self._version: bytes | None = None
        self._hits: dict[tuple[str, ...], int] = {}
        self.last_plan: str = ""  # "pruned" or "fts5: <why>", for the tests and the bench

    def top(
        self,
        conn: Connection,
        match: str,
        sources: Sequence[Source],
        *,
        every_source: bool,
        limit: int,
    ) -> list[tuple[int, float]]:
        """Return (rid, bm25 rank) of the best `limit` matches, best first, ties by rid."""
        phrases = parse_phrases(match)
        if phrases is None or limit <= 0:
            return self._fallback(conn, match, sources, every_source, limit, "not an OR of phrases")
        try:
            pruned = self._pruned(conn, phrases, sources, every_source, limit)
        except _Unmodelled as why:
            return self._fallback(conn, match, sources, every_source, limit, str(why))
        self.last_plan = "pruned"
        return pruned

    def _fallback(
        self,
        conn: Connection,
        match: str,
        sources: Sequence[Source],
        every_source: bool,
        limit: int,
        why: str,
    ) -> list[tuple[int, float]]:
        self.last_plan = f"fts5: {why}"
        return rows.keyword_top(conn, match, sources, every_source=every_source, limit=limit)

    # --- the pruned path -------------------------------------------------------------------------

    def _pruned(
        self,
        conn: Connection,
        texts: Sequence[str],
        sources: Sequence[Source],
        every_source: bool,
        limit: int,
    ) -> list[tuple[int, float]]:
        n_rows, total_tokens = self._refresh(conn)
        if n_rows <= 0:
            return []
        avgdl = float(total_tokens) / float(n_rows)
        # A cheap first look (each phrase's rows counted up to a cap, nothing ranked) decides
        # whether pruning can pay before the exact counts below, which read whole posting
        # lists: otherwise a query left to FTS5 would pay for both.
        cap = max(limit, MAX_CANDIDATES) + 1
        capped = sorted(self._capped_hits(conn, text, cap) for text in texts)
        if sum(capped[:-1]) < limit:
            raise _Unmodelled("every phrase is essential")
        if capped[0] > MAX_CANDIDATES:
            raise _Unmodelled("too many candidate rows for the rows it saves")
        phrases = []
        for index, text in enumerate(texts):
            tokens = self._phrase_tokens(text)
            hits = self._phrase_hits(conn, text, tokens)
            # FTS5's arithmetic: integer difference, then doubles.
            idf = math.log((n_rows - hits + 0.5) / (hits + 0.5))
            phrases.append(_Phrase(index, text, tokens, _IDF_FLOOR if idf <= 0.0 else idf, hits))
        order = sorted(phrases, key=lambda p: (-p.bound, p.index))
        wanted = sorted({t for p in phrases for t in p.tokens})
        allowed = None if every_source else set(sources)
        if sum(p.hits for p in order[:-1]) < limit:
            # Even every row of all but the commonest phrase cannot fill the top k: the loop
            # below would reach the last phrase anyway, after work FTS5 then repeats.
            raise _Unmodelled("every phrase is essential")
        budget = min(MAX_CANDIDATES, sum(p.hits for p in phrases) // COST_RATIO)
        scored: dict[int, float] = {}
        seen: set[int] = set()
        candidates = 0
        for taken, phrase in enumerate(order, start=1):
            if taken == len(order):
                # Nothing left to prune: FTS5 ranks the union faster than this module would.
                raise _Unmodelled("every phrase is essential")
            candidates += phrase.hits  # known before reading a row: no work wasted
            if candidates > budget:
                raise _Unmodelled("too many candidate rows for the rows it saves")
            matching = [r for r in self._phrase_rows(conn, phrase.text) if r not in seen]
            seen.update(matching)
            scored |= self._score(conn, matching, phrases, avgdl, allowed, wanted, phrase)
            rest = math.fsum(p.bound for p in order[taken:])
            if len(scored) >= limit:
                kth = sorted(-s for s in scored.values())[limit - 1]
                if rest * (1.0 + _BOUND_MARGIN) < kth:
                    break
        ranked = sorted(scored.items(), key=lambda item: (item[1], item[0]))
        return ranked[:limit]

    def _score(
        self,
        conn: Connection,
        rids: Sequence[int],
        phrases: Sequence[_Phrase],
        avgdl: float,
        allowed: set[Source] | None,
        wanted: Sequence[str],
        via: _Phrase,
    ) -> dict[int, float]:
        """bm25 of each row, as FTS5's bm25() computes it, in its operation order."""
        docs: list[tuple[int, str]] = []
        for batch in batches(rids):
            for rid, source, text in conn.exec_driver_sql(
                f"SELECT rid, source, {schema.INDEXED_TEXT} FROM chunks "
                f"WHERE rid IN ({placeholders(len(batch))})",
                tuple(batch),
            ):
                if allowed is None or source in allowed:
                    docs.append((int(rid), fts_document(str(text))))
        if not docs:
            return {}
        lengths = doc_lengths(conn, [rid for rid, _ in docs])
        positions = self._tokenizer.positions(docs, wanted)
        out: dict[int, float] = {}
        for rid, _ in docs:
            found = positions[rid]
            length = lengths.get(rid)
            if length is None or phrase_count(found, via.tokens) == 0:
                # FTS5's row differs from what its text tokenizes to now: trust FTS5.
                raise _Unmodelled("a keyword row differs from its chunk's text")
            big_d = float(length)
            score = 0.0
            for phrase in phrases:
                freq = float(phrase_count(found, phrase.tokens))
                score += phrase.idf * (
                    (freq * (_K1 + 1.0)) / (freq + _K1 * (1 - _B + _B * big_d / avgdl))
                )
            out[rid] = -1.0 * score
        return out

    def document_counts(self, conn: Connection, terms: Sequence[str]) -> tuple[int, list[int]]:
        """The table's rows and the rows matching each term (bm25's N and n_i, cached as the
        ranking's own counts are); a term without tokens matches none."""
        n_rows, _ = self._refresh(conn)
        counts: list[int] = []
        for term in terms:
            try:
                tokens = self._phrase_tokens(term)
            except _Unmodelled:
                counts.append(0)
                continue
            counts.append(self._phrase_hits(conn, term, tokens))
        return n_rows, counts

    # --- FTS5's numbers, cached per index version ---------------------------------------------

    def _refresh(self, conn: Connection) -> tuple[int, int]:
        """Read the averages and structure records; drop cached counts when they changed."""
        blocks: dict[int, bytes] = {
            int(rowid): bytes(block)
            for rowid, block in conn.exec_driver_sql(
                f"SELECT id, block FROM {schema.FTS_TABLE}_data WHERE id IN (?, ?)",
                (_AVERAGES_ID, _STRUCTURE_ID),
            )
        }
        averages = bytes(blocks.get(_AVERAGES_ID) or b"")
        version = averages + b"|" + bytes(blocks.get(_STRUCTURE_ID) or b"")
        with self._lock:
            if version != self._version:
                self._version = version
                self._hits = {}
        if not averages:
            return 0, 0
        n_rows, at = read_varint(averages, 0)
        total, _ = read_varint(averages, at)
        return n_rows, total

    def _phrase_tokens(self, text: str) -> tuple[str, ...]:
        tokens = self._tokens.get(text)
        if tokens is None:
            found = self._tokenizer.positions([(1, text)], None)[1]
            ordered = sorted((o, t) for t, offsets in found.items() for o in offsets)
            tokens = tuple(t for _, t in ordered)
            if len(self._tokens) >= _CACHE_LIMIT:
                self._tokens.clear()
            self._tokens[text] = tokens
        if not tokens:
            raise _Unmodelled("a phrase without tokens")
        return tokens

    def _phrase_hits(self, conn: Connection, text: str, tokens: tuple[str, ...]) -> int:
        """Rows matching a phrase (FTS5's n_i): fts5vocab for one token, else a count."""
        with self._lock:
            cached = self._hits.get(tokens)
        if cached is not None:
            return cached
        if len(tokens) == 1:
            _ensure_vocab(conn)
            row = conn.exec_driver_sql(
                f"SELECT doc FROM {_VOCAB_TABLE} WHERE term = ?", (tokens[0],)
            ).first()
            hits = 0 if row is None else int(row[0])
        else:
            hits = int(
                conn.exec_driver_sql(
                    f"SELECT count(*) FROM {schema.FTS_TABLE} WHERE {schema.FTS_TABLE} MATCH ?",
                    (_quote(text),),
                ).scalar_one()
            )
        with self._lock:
            if len(self._hits) >= _CACHE_LIMIT:
                self._hits.clear()
            self._hits[tokens] = hits
        return hits

    def _capped_hits(self, conn: Connection, text: str, cap: int) -> int:
        """Rows matching a phrase, counted up to `cap` (FTS5 stops there: no ranking)."""
        return int(
            conn.exec_driver_sql(
                f"SELECT count(*) FROM (SELECT 1 FROM {schema.FTS_TABLE} "
                f"WHERE {schema.FTS_TABLE} MATCH ? LIMIT ?)",
                (_quote(text), cap),
            ).scalar_one()
        )

    def _phrase_rows(self, conn: Connection, text: str) -> list[int]:
        return [
            int(r[0])
            for r in conn.exec_driver_sql(
                f"SELECT rowid FROM {schema.FTS_TABLE} WHERE {schema.FTS_TABLE} MATCH ?",
                (_quote(text),),
            )
        ]


class _Unmodelled(Exception):
    """The pruned path does not model this query or row: FTS5 answers instead."""


def _quote(text: str) -> str:
    """One phrase of the query, as a MATCH expression of its own."""
    return '"' + text.replace('"', '""') + '"'


def _ensure_vocab(conn: Connection) -> None:
    """A per-connection fts5vocab view of the keyword table (temp: nothing is written to the
    database file, and a read-only file works)."""
    if conn.info.get("memlane_fts_vocab"):
        return
    conn.exec_driver_sql(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {_VOCAB_TABLE} "
        f"USING fts5vocab(main, {schema.FTS_TABLE}, row)"
    )
    conn.info["memlane_fts_vocab"] = True
