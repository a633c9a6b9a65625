"""Adapter plumbing: the keyword leg, BM25 over the postings with FTS5's exact arithmetic.

A query's phrases come from `analysis.parse_match` and are tokenised like the documents. The
statistics (rows N, total tokens, rows per phrase) are the agent's, as in its own SQLite file.
N and the token total come from `memlane_keyword_stats`, kept by every postings write; the rows
per term are counted from the postings and cached per process under the agent's generation
(`HitCache`), which every postings write renews, in the same transaction: a search reads the
generation in its snapshot, so a cached count is the count that snapshot would give. The
unpruned reference path (`prune=False`) counts everything afresh instead.

Three paths, one ranking:

* every phrase is one token (what `build_fts_query` produces) and the rarest terms bring few
  rows: exact MaxScore pruning (keyword_pruned.py) reads only the postings that can reach the
  top k;
* every phrase is one token, otherwise ("full"): PostgreSQL scores the matching
  rows with the same formula and keeps a head of `limit * 2 + 16`, then the head is scored again
  in Python (bm25.py) and cut to `limit`. The SQL pass only chooses the head; summation order
  in SQL may differ in the last bit, which can only swap near-equal rows at the head's edge,
  and the margin keeps those inside it. Ties are broken by rid (insertion order), as FTS5 visits
  rows by rowid;
* a phrase of several tokens: the rows holding all of its tokens are fetched with positions and
  the phrase is counted where the tokens stand consecutively (FTS5's phrase semantics).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from typing import Final

from sqlalchemy import Connection

from memlane.adapters.postgres import bm25, keyword_pruned, rows, time_span
from memlane.adapters.ranked_window import ranked_within
from memlane.domain.search import TimeWindow
from memlane.domain.sources import Source

PRUNED: Final = "pruned"
FULL: Final = "full"
PHRASES: Final = "phrases"
_CACHE_LIMIT: Final = 4096


class HitCache:
    """Rows per term of one agent at one generation (thread-safe; one per store)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: tuple[str, int] | None = None
        self._hits: dict[str, int] = {}

    def hits(
        self, conn: Connection, agent: str, generation: int, terms: Sequence[str]
    ) -> dict[str, int]:
        """Return term -> rows containing it, counting only the terms not cached yet."""
        with self._lock:
            if self._key != (agent, generation) or len(self._hits) > _CACHE_LIMIT:
                self._key, self._hits = (agent, generation), {}
            known = {t: self._hits[t] for t in terms if t in self._hits}
        missing = [t for t in dict.fromkeys(terms) if t not in known]
        if missing:
            counted = _hit_counts(conn, agent, missing)
            fresh = {t: counted.get(t, 0) for t in missing}
            with self._lock:
                if self._key == (agent, generation):
                    self._hits.update(fresh)
            known |= fresh
        return known


def document_counts(
    conn: Connection, agent: str, phrases: Sequence[Sequence[str]], cache: HitCache | None
) -> tuple[int, list[int]]:
    """The agent's rows and the rows holding each phrase (bm25's N and n_i; one-token phrases
    through the cached counts the ranking uses, when it caches them)."""
    single = [p[0] for p in phrases if len(p) == 1]
    if cache is None:
        n_rows, _ = _stats(conn, agent)
        hits = _hit_counts(conn, agent, single) if single else {}
    else:
        n_rows, _, generation = rows.keyword_stats(conn, agent)
        hits = cache.hits(conn, agent, generation, single) if single else {}
    counts = [
        0 if not p else hits.get(p[0], 0) if len(p) == 1 else len(_phrase_freqs(conn, agent, p))
        for p in phrases
    ]
    return n_rows, counts


def _stats(conn: Connection, agent: str) -> tuple[int, int]:
    """The agent's rows and token total counted from its chunks (the reference path)."""
    n_rows, total = conn.exec_driver_sql(
        "SELECT count(*), coalesce(sum(doc_len), 0) FROM memlane_chunks WHERE agent = %s",
        (agent,),
    ).one()
    return int(n_rows), int(total)


def _phrase_freqs(conn: Connection, agent: str, phrase: Sequence[str]) -> dict[int, float]:
    """Return rid -> occurrences of `phrase` (consecutive tokens) in the agent's rows."""
    if len(phrase) == 1:
        return {
            int(rid): float(tf)
            for rid, tf in conn.exec_driver_sql(
                "SELECT rid, tf FROM memlane_postings WHERE agent = %s AND term = %s",
                (agent, phrase[0]),
            )
        }
    by_rid: dict[int, dict[str, set[int]]] = {}
    for term, rid, positions in conn.exec_driver_sql(
        "SELECT term, rid, positions FROM memlane_postings WHERE agent = %s "
        "AND term = ANY(%s) AND rid IN (SELECT rid FROM memlane_postings "
        "WHERE agent = %s AND term = ANY(%s) GROUP BY rid HAVING count(*) = %s)",
        (agent, list(set(phrase)), agent, list(set(phrase)), len(set(phrase))),
    ):
        by_rid.setdefault(int(rid), {})[str(term)] = set(positions)
    freqs: dict[int, float] = {}
    for rid, where in by_rid.items():
        starts = where[phrase[0]]
        n = sum(1 for s in starts if all(s + k in where[token] for k, token in enumerate(phrase)))
        if n:
            freqs[rid] = float(n)
    return freqs


def _sources_of(
    conn: Connection, agent: str, rids: Sequence[int], window: TimeWindow | None
) -> dict[int, tuple[str, int]]:
    """rid -> (source, length) of the rows among `rids` written within `window`."""
    since, until = (-math.inf, math.inf) if window is None else window.bounds()
    return {
        int(rid): (str(source), int(length))
        for rid, source, length in conn.exec_driver_sql(
            "SELECT rid, source, doc_len FROM memlane_chunks WHERE agent = %s AND rid = ANY(%s)"
            + ("" if window is None else " AND time_end >= %s AND time_start <= %s"),
            (agent, list(rids), *(() if window is None else (since, until))),
        )
    }


def top(
    conn: Connection,
    agent: str,
    phrases: Sequence[Sequence[str]],
    sources: Sequence[Source],
    limit: int,
    *,
    cache: HitCache | None,
    window: TimeWindow | None = None,
) -> tuple[list[tuple[int, float]], str]:
    """Return (rid, bm25 rank) of the best `limit` rows matching any phrase, best first, and
    the path that ranked them (PRUNED, FULL or PHRASES). Without `cache`: the unpruned
    reference, every statistic counted from the rows (the same answer, slower). With
    `window`, only rows written within it are ranked (the full path: pruning's bounds do not
    know the window); bm25's statistics stay the agent's, as FTS5's do with a filter."""
    phrases = [p for p in phrases if p]
    if not phrases:
        return [], FULL
    if cache is None:
        n_rows, total = _stats(conn, agent)
        generation = 0
    else:
        n_rows, total, generation = rows.keyword_stats(conn, agent)
    if n_rows <= 0:
        return [], FULL
    avgdl = float(total) / float(n_rows)
    path = PHRASES
    if all(len(p) == 1 for p in phrases):
        terms = [p[0] for p in phrases]
        if cache is None:
            hits = _hit_counts(conn, agent, terms)
        else:
            hits = cache.hits(conn, agent, generation, terms)
        idfs = [bm25.idf(n_rows, hits.get(t, 0)) for t in terms]
        if cache is not None and window is None:
            order = keyword_pruned.plan(terms, idfs, hits)
            pruned = keyword_pruned.top(conn, agent, terms, idfs, order, sources, limit, avgdl)
            if pruned is not None:
                return pruned, PRUNED
        path = FULL
        freqs = _head_freqs(conn, agent, terms, idfs, sources, limit, avgdl, window)
    else:
        freqs = [_phrase_freqs(conn, agent, p) for p in phrases]
        idfs = [bm25.idf(n_rows, len(f)) for f in freqs]
    matched = sorted({rid for f in freqs for rid in f})
    info = _sources_of(conn, agent, matched, window)
    wanted = set(sources)
    ranked = [
        (bm25.rank(idfs, [f.get(rid, 0.0) for f in freqs], info[rid][1], avgdl), rid)
        for rid in matched
        if rid in info and info[rid][0] in wanted
    ]
    ranked.sort()
    return [(rid, score) for score, rid in ranked[:limit]], path


# A window holding at least this many of the agent's chunks is ranked first (the pruned path,
# over-fetched; adapters/ranked_window.py), a narrower one by the full path inside it.
NARROW_ROWS: Final = 50_000


def window_top(
    conn: Connection,
    agent: str,
    phrases: Sequence[Sequence[str]],
    sources: Sequence[Source],
    limit: int,
    *,
    cache: HitCache | None,
    window: TimeWindow | None,
) -> tuple[list[tuple[int, float]], str]:
    """`top` within `window`, the same rows, by the cheaper plan for the window's width (and
    `top` itself without a window or a cache)."""
    if window is None or cache is None:
        return top(conn, agent, phrases, sources, limit, cache=cache, window=window)
    held = conn.exec_driver_sql(
        "SELECT count(*) FROM (SELECT 1 FROM memlane_chunks WHERE agent = %s "
        "AND time_end >= %s AND time_start <= %s AND time_end <= %s LIMIT %s) AS w",
        (agent, *time_span.bounds(conn, agent, window), NARROW_ROWS),
    ).scalar_one()
    if int(held) >= NARROW_ROWS:
        plans: list[str] = []

        def rank(n: int) -> list[tuple[int, float]]:
            scored, plan = top(conn, agent, phrases, sources, n, cache=cache)
            plans.append(plan)
            return scored

        kept, fetch = ranked_within(
            rank, lambda rids: set(_sources_of(conn, agent, rids, window)), limit
        )
        if kept is not None:
            return kept, f"{plans[-1]}; ranked {fetch}, kept those within the time window"
    return top(conn, agent, phrases, sources, limit, cache=cache, window=window)


def _hit_counts(conn: Connection, agent: str, terms: Sequence[str]) -> dict[str, int]:
    """Return term -> number of the agent's rows containing it."""
    return {
        str(term): int(n)
        for term, n in conn.exec_driver_sql(
            "SELECT term, count(*) FROM memlane_postings WHERE agent = %s AND term = ANY(%s) "
            "GROUP BY term",
            (agent, list(set(terms))),
        )
    }


def _head_freqs(
    conn: Connection,
    agent: str,
    terms: Sequence[str],
    idfs: Sequence[float],
    sources: Sequence[Source],
    limit: int,
    avgdl: float,
    window: TimeWindow | None = None,
) -> list[dict[int, float]]:
    """Per term, rid -> tf over the head of rows PostgreSQL ranks best (see module docstring)."""
    # `term = ANY(...)` rather than a join with the query terms: the planner then reads each
    # term's frequency from the column statistics and, for a common term, hash-joins the
    # agent's chunks (an index-only scan of memlane_chunks_stats) instead of probing them once
    # per posting (measured at 10k chunks with a term in 28 % of them: 131 ms -> 90 ms).
    # A term repeated in the query counts once per occurrence, as the phrase join did.
    unique = list(dict.fromkeys(terms))
    weights = dict.fromkeys(unique, 0.0)
    for term, weight in zip(terms, idfs, strict=True):
        weights[term] += weight
    head = conn.exec_driver_sql(
        "SELECT p.rid FROM memlane_postings p JOIN memlane_chunks c "
        "ON c.agent = p.agent AND c.rid = p.rid "
        "WHERE p.agent = %s AND c.agent = %s AND p.term = ANY(%s) AND c.source = ANY(%s) "
        + (
            ""
            if window is None
            else "AND c.time_end >= %s AND c.time_start <= %s AND c.time_end <= %s "
        )
        + "GROUP BY p.rid ORDER BY sum((%s::float8[])[array_position(%s::text[], p.term)] "
        "* (p.tf * %s) / (p.tf + %s * (%s + %s * c.doc_len / %s))) DESC, p.rid LIMIT %s",
        (
            agent,
            agent,
            list(terms),
            list(sources),
            *(() if window is None else time_span.bounds(conn, agent, window)),
            [weights[t] for t in unique],
            unique,
            bm25.K1 + 1.0,
            bm25.K1,
            1 - bm25.B,
            bm25.B,
            avgdl,
            limit * 2 + 16,
        ),
    ).all()
    head_rids = [int(r[0]) for r in head]
    tf: dict[tuple[str, int], float] = {
        (str(term), int(rid)): float(n)
        for term, rid, n in conn.exec_driver_sql(
            "SELECT term, rid, tf FROM memlane_postings WHERE agent = %s AND term = ANY(%s) "
            "AND rid = ANY(%s)",
            (agent, list(set(terms)), head_rids),
        )
    }
    return [{rid: tf[(t, rid)] for rid in head_rids if (t, rid) in tf} for t in terms]
