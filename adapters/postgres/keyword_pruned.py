"""Adapter plumbing: the keyword leg's top-k by exact MaxScore pruning over the postings.

Why: ranking every row that holds any query term costs what the commonest term costs. In the
store bench (Zipf words, a common and a rare word per query) one term is in most of the
agent's rows, and aggregating its postings with the chunks' lengths took ~1.1 s at 100k chunks,
whatever `limit` was, while the answer comes from the rare term's few hundred rows.

How (exact: the same ranks, bit for bit, and the same order as the full computation in
keyword_search.py, which the tests compare it with):

* a term's contribution to a row's bm25 score is idf * f * (k1 + 1) / (f + k1 * (1 - b +
  b * D / avgdl)) < idf * (k1 + 1) for every f and D (1 - b > 0), so each term has an upper
  bound known before any posting is read (its idf, summed over its repeats in the query);
* terms are taken by descending bound (the rarest first). A step reads the rows holding the
  taken term within the source filter, with their length and the frequencies of EVERY query
  term in them, and scores them exactly (bm25.py, the same floats as the full path). Once the
  limit-th best score exceeds the sum of the bounds of the terms not taken yet (with a margin
  for rounding), a row holding only those terms scores below it, and they are never read;
* if the last term is reached, every row not scored yet holds that term and no other query
  term, so its score is a function of its frequency and length alone, falling as the length
  grows for a given frequency (IEEE operations are monotone). For each distinct frequency of
  the term, its `limit` shortest rows (ties by rid) therefore contain every such row of the top
  k: an index on (agent, term, tf, doc_len, rid) hands them over without reading the rest of a
  common term's postings;
* ties break by rid, as in the full path and in FTS5 (rows visited in rowid order).

The rows scored one by one cost a transfer and a Python loop each: when the terms before the
last would bring more of them than the budget (COST_RATIO, MAX_CANDIDATES), `top` gives up
before reading them and the caller ranks in full, which PostgreSQL aggregates faster then.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from sqlalchemy import Connection

from memlane.adapters.postgres import bm25
from memlane.domain.sources import Source

# Rows scored here cost a transfer and a Python loop each, several times what PostgreSQL spends
# aggregating one posting (measured at 100k chunks on two common terms: 17k rows scored here
# took 696 ms, the full aggregation of their 41k postings 330 ms). So the pruned path is taken
# only while the rows it scores one by one stay under 1/COST_RATIO of the postings the full
# path would aggregate, and under MAX_CANDIDATES in any case.
COST_RATIO: Final = 8
MAX_CANDIDATES: Final = 5_000
# Relative margin on the stopping test, so that rounding in the bound sum can never prune a row
# whose score ties the limit-th.
BOUND_MARGIN: Final = 1e-9


@dataclass(frozen=True, slots=True)
class Term:
    """A distinct query term: its text, first place in the query, summed idf and row count."""

    text: str
    first: int
    weight: float
    hits: int

    @property
    def bound(self) -> float:
        """Upper bound of the term's contribution to any row's score."""
        return self.weight * (bm25.K1 + 1.0)


def plan(terms: Sequence[str], idfs: Sequence[float], hits: dict[str, int]) -> list[Term]:
    """The distinct query terms by descending bound (ties: first in the query first)."""
    weights: dict[str, float] = {}
    first: dict[str, int] = {}
    for index, (term, weight) in enumerate(zip(terms, idfs, strict=True)):
        weights[term] = weights.get(term, 0.0) + weight
        first.setdefault(term, index)
    found = [Term(t, first[t], weights[t], hits.get(t, 0)) for t in weights]
    return sorted((t for t in found if t.hits > 0), key=lambda t: (-t.bound, t.first))


def top(
    conn: Connection,
    agent: str,
    terms: Sequence[str],
    idfs: Sequence[float],
    order: Sequence[Term],
    sources: Sequence[Source],
    limit: int,
    avgdl: float,
) -> list[tuple[int, float]] | None:
    """Return (rid, bm25 rank) of the best `limit` rows, best first, ties by rid; None when the
    rows to score would pass MAX_CANDIDATES (the caller then ranks in full)."""
    if not order:
        return []
    unique = [t.text for t in order]
    budget = min(MAX_CANDIDATES, sum(t.hits for t in order) // COST_RATIO)
    scored: dict[int, float] = {}
    read = 0
    for taken, term in enumerate(order[:-1], start=1):
        read += term.hits  # known before reading: nothing is read past the budget
        if read > budget:
            return None
        for rid, length, found, tfs in _rows_of(conn, agent, term.text, unique, sources):
            if rid not in scored:
                counts = dict(zip(found, tfs, strict=True))
                freqs = [float(counts.get(t, 0)) for t in terms]
                scored[rid] = bm25.rank(idfs, freqs, length, avgdl)
        if len(scored) >= limit:
            rest = math.fsum(t.bound for t in order[taken:])
            kth = sorted(scored.values())[limit - 1]
            if rest * (1.0 + BOUND_MARGIN) < -kth:
                return _best(scored, limit)
    # Every row not scored yet holds the last term and no other query term (it would have been
    # read with that term), so its score depends on (tf, length) alone: within one tf it falls
    # as the length grows (IEEE operations are monotone), and each tf's `limit` shortest rows
    # contain every such row of the top k.
    last = order[-1].text
    for rid, count, length in _best_rows_of(conn, agent, last, sources, sorted(scored), limit):
        freqs = [float(count) if t == last else 0.0 for t in terms]
        scored[rid] = bm25.rank(idfs, freqs, length, avgdl)
    return _best(scored, limit)


def _best(scored: dict[int, float], limit: int) -> list[tuple[int, float]]:
    ranked = sorted((rank, rid) for rid, rank in scored.items())
    return [(rid, rank) for rank, rid in ranked[:limit]]


def _rows_of(
    conn: Connection, agent: str, term: str, unique: Sequence[str], sources: Sequence[Source]
) -> list[tuple[int, int, list[str], list[int]]]:
    """Rows holding `term` within `sources`: rid, length, and the query terms' frequencies."""
    return [
        (int(rid), int(length), list(found), list(tfs))
        for rid, length, found, tfs in conn.exec_driver_sql(
            "SELECT e.rid, e.doc_len, array_agg(p.term), array_agg(p.tf) "
            "FROM memlane_postings e JOIN memlane_postings p "
            "ON p.agent = e.agent AND p.rid = e.rid AND p.term = ANY(%s) "
            "WHERE e.agent = %s AND e.term = %s AND e.source = ANY(%s) "
            "GROUP BY e.rid, e.doc_len",
            (list(unique), agent, term, list(sources)),
        )
    ]


def _best_rows_of(
    conn: Connection,
    agent: str,
    term: str,
    sources: Sequence[Source],
    skip: Sequence[int],
    limit: int,
) -> list[tuple[int, int, int]]:
    """For each distinct tf of `term`, its `limit` shortest rows in `sources` outside `skip`
    (rid, tf, length), read from the (agent, term, tf, doc_len, rid) index: the distinct
    frequencies by a loose index scan, then a bounded range per frequency."""
    return [
        (int(rid), int(tf), int(length))
        for rid, tf, length in conn.exec_driver_sql(
            "WITH RECURSIVE f(tf) AS ("
            "SELECT min(tf) FROM memlane_postings WHERE agent = %(a)s AND term = %(t)s "
            "UNION ALL SELECT (SELECT min(tf) FROM memlane_postings "
            "WHERE agent = %(a)s AND term = %(t)s AND tf > f.tf) FROM f WHERE f.tf IS NOT NULL) "
            "SELECT x.rid, x.tf, x.doc_len FROM f CROSS JOIN LATERAL ("
            "SELECT p.rid, p.tf, p.doc_len FROM memlane_postings p "
            "WHERE p.agent = %(a)s AND p.term = %(t)s AND p.tf = f.tf "
            "AND p.source = ANY(%(s)s) AND p.rid <> ALL(%(skip)s::bigint[]) "
            "ORDER BY p.doc_len, p.rid LIMIT %(k)s) x WHERE f.tf IS NOT NULL",
            {"a": agent, "t": term, "s": list(sources), "skip": list(skip), "k": limit},
        )
    ]
