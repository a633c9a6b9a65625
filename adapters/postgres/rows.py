"""Adapter plumbing: the rows of files, chunks and keyword postings of one agent.

Every function runs inside the caller's transaction and filters by agent. A chunk's postings
(one row per distinct token: its frequency and positions) carry the chunk's rid, so a chunk and
its keyword rows are written and deleted together, as with the SQLite store's FTS5 rows. The
chunk keeps its token count (`doc_len`), the D of bm25; each posting repeats it and the chunk's
source, so the keyword leg ranks a term's postings without a join (keyword_pruned.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final, cast

from sqlalchemy import Connection

from memlane.adapters.index_rows import candidate_from_row, chunk_from_row, file_from_row
from memlane.application.ports.index_store import IndexedFile, SourceCount, VectorProgress
from memlane.domain.chunks import Chunk
from memlane.domain.index_meta import KEYWORD_ONLY_MODEL
from memlane.domain.search import Candidate

if TYPE_CHECKING:  # pgvector is the `postgres` extra
    from pgvector import Vector as PgVector
from memlane.domain.sources import Source

CHUNK_COLUMNS = (
    "id, source, path, start_line, end_line, text, hash, timestamp, time_start, time_end, context"
)
_FILE_COLUMNS = "source, path, hash, mtime, size"


def now(conn: Connection) -> float:
    """Return the database's clock as Unix seconds."""
    return float(conn.exec_driver_sql("SELECT extract(epoch FROM clock_timestamp())").scalar_one())


# --- writes ------------------------------------------------------------------------------------


# Files written by one store after which the row tables are analysed. Until autovacuum's next
# pass (up to a minute away) the planner's statistics know nothing of a new agent (or of a
# rebuild's temporary id), guess one row for it, and each file's deletes then scanned all of its
# rows: a first index grew with the square of its files (3,200 notes: 86 s, 800: 4 s).
ANALYSE_AFTER_FILES: Final = frozenset({100, 1_000, 10_000, 100_000})


def analyse_tables(conn: Connection) -> None:
    """Refresh the planner's statistics of the chunks and postings (a sample: well under a
    second; a role that does not own the tables gets PostgreSQL's warning, not an error)."""
    conn.exec_driver_sql("ANALYZE memlane_chunks, memlane_postings")


def delete_file_chunks(conn: Connection, agent: str, source: str, path: str) -> None:
    """Delete one file's chunks and their postings.

    The file's rids are read first (an InitPlan: once), then its postings by the (agent, rid)
    index. A join let the planner guess one row for an agent the statistics did not know yet
    (a new agent, a rebuild's temporary id) and loop over all of the agent's postings per file:
    a first index or `index --force` of 800 notes took 60 s instead of a few.
    """
    conn.exec_driver_sql(
        "DELETE FROM memlane_postings WHERE agent = %s AND rid = ANY(ARRAY("
        "SELECT rid FROM memlane_chunks WHERE agent = %s AND source = %s AND path = %s))",
        (agent, agent, source, path),
    )
    gone, tokens = conn.exec_driver_sql(
        "WITH d AS (DELETE FROM memlane_chunks WHERE agent = %s AND source = %s AND path = %s "
        "RETURNING doc_len) SELECT count(*), coalesce(sum(doc_len), 0) FROM d",
        (agent, source, path),
    ).one()
    if gone:
        _add_keyword_stats(conn, agent, -int(gone), -int(tokens))


def _add_keyword_stats(conn: Connection, agent: str, rows: int, tokens: int) -> None:
    """Add to the agent's row count and token total (bm25's N and avgdl) and give it a new
    generation: every write of postings passes here, in the same transaction."""
    conn.exec_driver_sql(
        "INSERT INTO memlane_keyword_stats AS s(agent, rows, tokens, generation) "
        "VALUES (%s, %s, %s, nextval('memlane_keyword_generation')) "
        "ON CONFLICT (agent) DO UPDATE SET rows = s.rows + excluded.rows, "
        "tokens = s.tokens + excluded.tokens, generation = excluded.generation",
        (agent, rows, tokens),
    )


def keyword_stats(conn: Connection, agent: str) -> tuple[int, int, int]:
    """Return the agent's (rows, token total, generation); (0, 0, 0) before any write."""
    row = conn.exec_driver_sql(
        "SELECT rows, tokens, generation FROM memlane_keyword_stats WHERE agent = %s", (agent,)
    ).first()
    return (0, 0, 0) if row is None else (int(row[0]), int(row[1]), int(row[2]))


def chunk_state(conn: Connection, agent: str) -> tuple[int, int]:
    """The state of the agent's chunk rows: (keyword generation, vector generation), both drawn
    from one sequence, the first by every postings write, the second by every write that sets
    or drops vectors in place; (0, 0) before any write."""
    row = conn.exec_driver_sql(
        "SELECT generation, vector_generation FROM memlane_keyword_stats WHERE agent = %s",
        (agent,),
    ).first()
    return (0, 0) if row is None else (int(row[0]), int(row[1]))


def vectors_changed(conn: Connection, agent: str) -> None:
    """Draw the agent's vector generation anew, in the transaction that set or dropped vectors
    in place (an agent without chunk rows has no row, and no vector to change)."""
    conn.exec_driver_sql(
        "UPDATE memlane_keyword_stats "
        "SET vector_generation = nextval('memlane_keyword_generation') WHERE agent = %s",
        (agent,),
    )


def _postings(tokens: Sequence[str]) -> dict[str, list[int]]:
    positions: dict[str, list[int]] = {}
    for offset, token in enumerate(tokens):
        positions.setdefault(token, []).append(offset)
    return positions


def insert_chunks(
    conn: Connection,
    agent: str,
    rows: Sequence[tuple[Chunk, PgVector | None, str, int | None]],
    tokens: Sequence[Sequence[str]],
    updated_at: float,
) -> None:
    """Insert (chunk, vector, model, dims) rows with their postings (vectors go in binary).

    `tokens[i]` are the analysed tokens of `rows[i]`'s text (see analysis.py).
    """
    if not rows:
        return
    inserted = conn.exec_driver_sql(
        "INSERT INTO memlane_chunks(agent, id, source, path, start_line, end_line, hash, text, "
        "model, embedding, dims, timestamp, updated_at, doc_len, time_start, time_end, context) "
        "SELECT %s, id, source, path, sl, el, hash, text, model, emb, dims, ts, %s, dl, t0, t1, cx "
        "FROM unnest(%s::text[], %s::text[], %s::text[], %s::int[], %s::int[], %s::text[], "
        "%s::text[], %s::text[], %b::vector[], %s::int[], %s::float8[], %s::int[], "
        "%s::float8[], %s::float8[], %s::text[]) "
        "AS u(id, source, path, sl, el, hash, text, model, emb, dims, ts, dl, t0, t1, cx) "
        "RETURNING id, rid",
        (
            agent,
            updated_at,
            [c.id for c, _, _, _ in rows],
            [c.source for c, _, _, _ in rows],
            [c.path for c, _, _, _ in rows],
            [c.start_line for c, _, _, _ in rows],
            [c.end_line for c, _, _, _ in rows],
            [c.hash for c, _, _, _ in rows],
            [c.text for c, _, _, _ in rows],
            [model if v is not None else KEYWORD_ONLY_MODEL for _, v, model, _ in rows],
            [v for _, v, _, _ in rows],
            [d for _, v, _, d in rows],
            [c.timestamp for c, _, _, _ in rows],
            [len(t) for t in tokens],
            [c.time_start for c, _, _, _ in rows],
            [c.time_end for c, _, _, _ in rows],
            [c.context for c, _, _, _ in rows],
        ),
    ).all()
    rid_of = {str(i): int(r) for i, r in inserted}
    insert_postings(
        conn,
        agent,
        [rid_of[c.id] for c, _, _, _ in rows],
        [c.source for c, _, _, _ in rows],
        tokens,
    )
    _add_keyword_stats(conn, agent, len(rows), sum(len(t) for t in tokens))


def insert_postings(
    conn: Connection,
    agent: str,
    rids: Sequence[int],
    sources: Sequence[str],
    tokens: Sequence[Sequence[str]],
) -> None:
    """Insert the postings of the chunks `rids` (of `sources`) from their analysed `tokens`."""
    terms: list[str] = []
    posting_rids: list[int] = []
    tfs: list[int] = []
    positions: list[str] = []
    lengths: list[int] = []
    posting_sources: list[str] = []
    for rid, source, chunk_tokens in zip(rids, sources, tokens, strict=True):
        for term, offsets in _postings(chunk_tokens).items():
            terms.append(term)
            posting_rids.append(rid)
            tfs.append(len(offsets))
            positions.append("{" + ",".join(map(str, offsets)) + "}")
            lengths.append(len(chunk_tokens))
            posting_sources.append(source)
    if terms:
        conn.exec_driver_sql(
            "INSERT INTO memlane_postings(agent, term, rid, tf, positions, doc_len, source) "
            "SELECT %s, t, r, f, p::int[], d, s FROM unnest(%s::text[], %s::bigint[], "
            "%s::int[], %s::text[], %s::int[], %s::text[]) AS u(t, r, f, p, d, s)",
            (agent, terms, posting_rids, tfs, positions, lengths, posting_sources),
        )


def reset_keyword_stats(conn: Connection, agent: str, rows: int, tokens: int) -> None:
    """Set the agent's row count and token total outright, with a new generation (after every
    posting of the agent was written again)."""
    conn.exec_driver_sql(
        "INSERT INTO memlane_keyword_stats AS s(agent, rows, tokens, generation) "
        "VALUES (%s, %s, %s, nextval('memlane_keyword_generation')) "
        "ON CONFLICT (agent) DO UPDATE SET rows = excluded.rows, tokens = excluded.tokens, "
        "generation = excluded.generation",
        (agent, rows, tokens),
    )


def put_file(conn: Connection, agent: str, file: IndexedFile) -> None:
    """Insert or replace one files row."""
    conn.exec_driver_sql(
        "INSERT INTO memlane_files(agent, source, path, hash, mtime, size) "
        "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (agent, source, path) DO UPDATE SET "
        "hash = excluded.hash, mtime = excluded.mtime, size = excluded.size",
        (agent, file.source, file.path, file.hash, file.mtime, file.size),
    )


def touch_file(conn: Connection, agent: str, file: IndexedFile) -> None:
    """Update mtime and size of one files row (no-op if absent)."""
    conn.exec_driver_sql(
        "UPDATE memlane_files SET mtime = %s, size = %s "
        "WHERE agent = %s AND source = %s AND path = %s",
        (file.mtime, file.size, agent, file.source, file.path),
    )


def delete_file(conn: Connection, agent: str, source: str, path: str) -> None:
    """Delete one files row (its chunks go with `delete_file_chunks`)."""
    conn.exec_driver_sql(
        "DELETE FROM memlane_files WHERE agent = %s AND source = %s AND path = %s",
        (agent, source, path),
    )


# --- reads -------------------------------------------------------------------------------------


def file(conn: Connection, agent: str, source: Source, path: str) -> IndexedFile | None:
    """Return one files row, or None."""
    row = conn.exec_driver_sql(
        f"SELECT {_FILE_COLUMNS} FROM memlane_files WHERE agent = %s AND source = %s AND path = %s",
        (agent, source, path),
    ).first()
    return None if row is None else file_from_row(tuple(row))


def files(conn: Connection, agent: str, source: Source | None) -> list[IndexedFile]:
    """Return the files rows (of one source, or all), sorted by source then path."""
    sql = f"SELECT {_FILE_COLUMNS} FROM memlane_files WHERE agent = %s"
    args: tuple[str, ...] = (agent,)
    if source is not None:
        sql += " AND source = %s"
        args = (agent, source)
    rows = conn.exec_driver_sql(sql + ' ORDER BY source COLLATE "C", path COLLATE "C"', args)
    return [file_from_row(tuple(r)) for r in rows]


def file_count(conn: Connection, agent: str) -> int:
    """Return how many files the agent's index holds."""
    return int(
        conn.exec_driver_sql(
            "SELECT count(*) FROM memlane_files WHERE agent = %s", (agent,)
        ).scalar_one()
    )


def counts(conn: Connection, agent: str) -> list[SourceCount]:
    """Return files and chunks per source present in the index."""
    file_counts = {
        str(s): int(n)
        for s, n in conn.exec_driver_sql(
            "SELECT source, count(*) FROM memlane_files WHERE agent = %s GROUP BY source",
            (agent,),
        )
    }
    chunk_counts = {
        str(s): int(n)
        for s, n in conn.exec_driver_sql(
            "SELECT source, count(*) FROM memlane_chunks WHERE agent = %s GROUP BY source",
            (agent,),
        )
    }
    return [
        SourceCount(cast(Source, s), file_counts.get(s, 0), chunk_counts.get(s, 0))
        for s in sorted(set(file_counts) | set(chunk_counts))
    ]


def chunks_without_vectors(conn: Connection, agent: str, model: str, limit: int) -> list[Chunk]:
    """Return chunks whose vector is missing or was made by another model, oldest rid first."""
    rows = conn.exec_driver_sql(
        f"SELECT {CHUNK_COLUMNS} FROM memlane_chunks WHERE agent = %s "
        "AND (embedding IS NULL OR model <> %s) ORDER BY rid LIMIT %s",
        (agent, model, max(0, limit)),
    )
    return [chunk_from_row(tuple(r)) for r in rows]


def vector_progress(conn: Connection, agent: str, model: str) -> VectorProgress:
    """Count the agent's chunks with a vector of `model`, and all its chunks (one statement,
    so one snapshot; both counts come from the (agent, model) index)."""
    done, total = conn.exec_driver_sql(
        "SELECT count(*) FILTER (WHERE model = %s AND embedding IS NOT NULL), count(*) "
        "FROM memlane_chunks WHERE agent = %s",
        (model, agent),
    ).one()
    return VectorProgress(done=int(done), total=int(total))


def candidates(
    conn: Connection, agent: str, scored: Sequence[tuple[int, float]]
) -> list[Candidate]:
    """Turn (rid, score) pairs into Candidates, in the same order (vanished rids are skipped)."""
    if not scored:
        return []
    found = {
        int(r[0]): tuple(r)
        for r in conn.exec_driver_sql(
            "SELECT c.rid, c.id, c.source, c.path, c.start_line, c.end_line, c.text, "
            "c.timestamp, f.mtime, c.time_start, c.time_end FROM memlane_chunks c "
            "LEFT JOIN memlane_files f "
            "ON f.agent = c.agent AND f.source = c.source AND f.path = c.path "
            "WHERE c.agent = %s AND c.rid = ANY(%s)",
            (agent, [rid for rid, _ in scored]),
        )
    }
    result = []
    for rid, score in scored:
        row = found.get(rid)
        if row is None:
            continue
        result.append(candidate_from_row(row, score))
    return result
