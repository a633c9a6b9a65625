"""Adapter plumbing: an agent's postings made by another text analysis are made again.

The SQLite store rebuilds its FTS5 table at open when the tokenizer or `FTS_DOCUMENT_VERSION`
changed (store/reconcile.py). Here every agent records the analysis its postings were made with
(`ANALYSIS_KEY` in its meta rows); a store whose agent was analysed otherwise (or before the
record existed) analyses every chunk again before its first read or write of the keyword leg,
in one transaction: a search sees the old postings or the new ones, never a mix. A transaction
advisory lock keyed by the agent makes concurrent processes do it once; the others find the
record current when they get the lock.
"""

from __future__ import annotations

import time
from typing import Final

import structlog
from sqlalchemy import Connection

from memlane.adapters.postgres import meta, rows
from memlane.adapters.postgres.analysis import Fts5Analyser
from memlane.adapters.postgres.database import PostgresDatabase
from memlane.adapters.postgres.sync_lock import lock_key
from memlane.domain.keywords import FTS_DOCUMENT_VERSION, FTS_TOKENIZER

log = structlog.get_logger()

ANALYSIS_KEY: Final = "keyword_analysis"
# Chunks analysed and written per round (bounds the memory at a million chunks).
_BATCH: Final = 5_000


def current() -> str:
    """The record of today's analysis: what `fts_document` makes of a text, and the tokenizer."""
    return f"{FTS_DOCUMENT_VERSION}|{FTS_TOKENIZER}"


def stamp(conn: Connection, agent: str) -> None:
    """Record that `agent`'s postings are today's analysis (whoever just wrote them all)."""
    meta.put(conn, agent, ANALYSIS_KEY, current())


def is_current(db: PostgresDatabase, agent: str) -> bool:
    """Whether `agent`'s postings were made by today's analysis (one meta read)."""
    with db.read() as conn:
        return meta.get(conn, agent, ANALYSIS_KEY) == current()


def bring_up_to_date(db: PostgresDatabase, agent: str, analyser: Fts5Analyser) -> int:
    """Analyse `agent`'s chunks again unless its postings are current; return the chunks redone."""
    if is_current(db, agent):
        return 0
    started = time.monotonic()

    def work(conn: Connection) -> int:
        conn.exec_driver_sql(
            "SELECT pg_advisory_xact_lock(%s)", (lock_key(f"keyword-analysis:{agent}"),)
        )
        recorded = meta.get(conn, agent, ANALYSIS_KEY)
        if recorded == current():
            return 0  # another process did it while this one waited
        # Said first: at a million chunks this takes minutes, and the caller's search waits.
        log.info(
            "keyword_postings_reanalysing", agent=agent, was=recorded or "unrecorded", now=current()
        )
        redone = _reanalyse(conn, agent, analyser)
        stamp(conn, agent)
        if redone:
            log.info(
                "keyword_postings_reanalysed",
                agent=agent,
                chunks=redone,
                was=recorded or "unrecorded",
                now=current(),
                seconds=round(time.monotonic() - started, 1),
            )
        return redone

    return db.write(work)


def _reanalyse(conn: Connection, agent: str, analyser: Fts5Analyser) -> int:
    conn.exec_driver_sql("DELETE FROM memlane_postings WHERE agent = %s", (agent,))
    done = 0
    tokens_total = 0
    after = -1
    while True:
        batch = conn.exec_driver_sql(
            # Each chunk's trail and text, as Chunk.indexed_text joins them.
            "SELECT rid, CASE WHEN context = '' THEN text ELSE context || chr(10) || text END, "
            "source FROM memlane_chunks WHERE agent = %s AND rid > %s "
            "ORDER BY rid LIMIT %s",
            (agent, after, _BATCH),
        ).all()
        if not batch:
            break
        tokens = analyser.document_tokens([str(text) for _, text, _ in batch])
        rids = [int(rid) for rid, _, _ in batch]
        conn.exec_driver_sql(
            "UPDATE memlane_chunks c SET doc_len = u.d FROM unnest(%s::bigint[], %s::int[]) "
            "AS u(r, d) WHERE c.agent = %s AND c.rid = u.r",
            (rids, [len(t) for t in tokens], agent),
        )
        rows.insert_postings(conn, agent, rids, [str(s) for _, _, s in batch], tokens)
        done += len(batch)
        tokens_total += sum(len(t) for t in tokens)
        after = rids[-1]
    rows.reset_keyword_stats(conn, agent, done, tokens_total)
    return done
