"""Adapter part: what a search reads of one agent's rows in PostgreSQL (both legs, the pieces).

`PostgresSearchReads` holds the vector leg (pgvector HNSW, re-scored exactly), the keyword leg
(BM25 as FTS5 computes it, MaxScore-pruned unless the store was made without), the note pieces'
cosines and the background sample, each in one read snapshot. `PostgresIndexStore` is one, with
the writes and the bookkeeping (postgres_index_store.py); the search's reads are a module apart
so that one keeps to those.

Quirk absorbed here: the keyword leg accepts the OR-of-phrases MATCH expressions the domain
builds and gives [] for any other FTS5 syntax (analysis.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from memlane.adapters.postgres import chunk_pieces, keyword_analysis, keyword_search, rows
from memlane.adapters.postgres import meta as meta_rows
from memlane.adapters.postgres import vectors as vector_leg
from memlane.adapters.postgres.analysis import Fts5Analyser, parse_match
from memlane.adapters.postgres.database import PostgresDatabase
from memlane.adapters.sample_cosines import sample_cosines
from memlane.application.ports.embedding import Vector
from memlane.application.ports.index_store import (
    check_query_dims,
    check_vector,
    vector_search_wanted,
)
from memlane.domain.chunks import ChunkId
from memlane.domain.search import Candidate, TimeWindow
from memlane.domain.sources import Source


class PostgresSearchReads:
    """The search side of `PostgresIndexStore`, over the attributes its constructor sets."""

    _db: PostgresDatabase
    _agent: str
    _analyser: Fts5Analyser
    _hit_cache: keyword_search.HitCache | None
    _analysis_checked: bool
    # The keyword leg's path of the last search (keyword_search.PRUNED, FULL or PHRASES).
    last_keyword_plan: str

    def piece_cosines(
        self, vector: Vector, *, model: str, ids: Sequence[ChunkId]
    ) -> dict[ChunkId, tuple[float, float | None]]:
        """Each chunk's cosine with `vector` and its best piece's (see IndexStore)."""
        with self._db.read() as conn:
            return chunk_pieces.cosines(conn, self._agent, vector, model, ids)

    def search_vector(
        self,
        vector: Vector,
        *,
        model: str,
        sources: Sequence[Source],
        limit: int,
        window: TimeWindow | None = None,
    ) -> list[Candidate]:
        """Return the `limit` chunks nearest to `vector` by cosine (see IndexStore)."""
        if not vector_search_wanted(vector, sources, limit):
            return []
        with self._db.read() as conn:
            dims = meta_rows.vector_dims(conn, self._agent)
            if dims is None:
                return []
            check_query_dims(vector, dims)
            scored = vector_leg.top(
                conn,
                self._agent,
                vector,
                dims=dims,
                model=model,
                sources=sources,
                limit=limit,
                window=window,
            )
            return rows.candidates(conn, self._agent, scored)

    def background_cosines(self, vector: Vector, *, model: str, limit: int) -> list[float]:
        """Cosines with the first `limit` vectors by chunk id (see IndexStore)."""
        check_vector(vector)
        if limit <= 0 or not vector:
            return []
        with self._db.read() as conn:
            sample = vector_leg.sample(conn, self._agent, model, limit)
        return sample_cosines(vector, sample)

    def search_keyword(
        self,
        match: str,
        *,
        sources: Sequence[Source],
        limit: int,
        window: TimeWindow | None = None,
    ) -> list[Candidate]:
        """Return the `limit` best bm25 matches of an OR-of-phrases expression (see module)."""
        if limit <= 0 or not sources or not match.strip():
            return []
        phrases = parse_match(match)
        if phrases is None:
            return []
        tokens = self._analyser.tokens(phrases)
        self._check_analysis()
        with self._db.read() as conn:
            scored, self.last_keyword_plan = keyword_search.window_top(
                conn, self._agent, tokens, sources, limit, cache=self._hit_cache, window=window
            )
            return rows.candidates(conn, self._agent, scored)

    def keyword_document_counts(self, terms: Sequence[str]) -> tuple[int, list[int]]:
        """The agent's keyword rows and rows holding each term (see IndexStore)."""
        phrases = self._analyser.tokens(list(terms))
        self._check_analysis()
        with self._db.read() as conn:
            return keyword_search.document_counts(conn, self._agent, phrases, self._hit_cache)

    def _check_analysis(self) -> None:
        # Once per store: postings made by an older analysis are made again before any use.
        if not self._analysis_checked:
            keyword_analysis.bring_up_to_date(self._db, self._agent, self._analyser)
            self._analysis_checked = True
