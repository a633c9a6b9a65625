"""Application: the indexes one search reads (this agent's, or several agents' as one pool).

Across agents, an agent whose index records no embedding provider (its own process runs
keyword-only, `provider: "none"` or no provider on its host) is keyword-only by design: it
joins the pool through its keyword leg alone and never holds the others' vector leg back; its
missing vectors are not a backfill under way (application/queries.py, the partial-vector rule).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from memlane.application.ports.index_store import IndexStore
from memlane.domain.agents import AgentsNotComparable, agent_of, qualified, unqualified
from memlane.domain.chunks import ChunkId
from memlane.domain.index_meta import IndexMeta, vector_label
from memlane.domain.keywords import build_fts_query
from memlane.domain.note_pieces import has_pieces, pieced_score
from memlane.domain.search import Candidate, TimeWindow
from memlane.domain.sources import Source

# An agent and its index; None stands for the searcher's own index.
AgentStore = tuple[str, IndexStore | None]


def keyword_only_by_design(meta: IndexMeta | None) -> bool:
    """Whether an index was built by a process without an embedding provider (no vectors ever).

    WantedMeta records provider "none" only then; an index that once had vectors keeps their
    provider while its process runs keyword-only, and an index still embedding records its
    provider: both stay in the vector leg.
    """
    return meta is not None and meta.provider == "none" and meta.dimensions is None


class Legs:
    """The indexes one search reads: this agent's alone, or several agents' as one pool."""

    def __init__(
        self,
        stores: Sequence[AgentStore] | None,
        own: IndexStore,
        window: TimeWindow | None = None,
    ) -> None:
        self.window = window  # the strict since / until filter, applied inside each leg
        self.stores: list[tuple[str | None, IndexStore]] = (
            [(None, own)] if stores is None else [(a, own if s is None else s) for a, s in stores]
        )
        # bm25 evidence is pooled raw across agents, like one index's: measured on a split
        # corpus (bench/studies/agents_split_bench.py), normalising it per agent (the benchmark's
        # alternative) put every agent's best keyword hit on top and halved keyword recall@1.
        self.many = stores is not None
        # Read once per search (a PostgreSQL store asks its database on every call); one
        # agent's own search needs none (a keyword-only process has no provider to hold back).
        self._metas = {a: s.meta() for a, s in self.stores} if self.many else {}
        self.keyword_only = [
            a for a, meta in self._metas.items() if a is not None and keyword_only_by_design(meta)
        ]
        # The indexes the vector leg reads (and whose vector progress counts).
        self.vectored: list[tuple[str | None, IndexStore]] = [
            (a, s) for a, s in self.stores if a not in self.keyword_only
        ]

    def keyword(self, text: str, sources: Sequence[Source], limit: int) -> list[Candidate]:
        match = build_fts_query(text)
        if match is None:
            return []
        found: list[Candidate] = []
        for agent, store in self.stores:
            hits = store.search_keyword(match, sources=sources, limit=limit, window=self.window)
            found += _qualified(agent, hits)
        return found

    def vector(
        self, vector: list[float], model: str, sources: Sequence[Source], limit: int
    ) -> list[Candidate]:
        found: list[Candidate] = []
        for agent, store in self.vectored:
            hits = store.search_vector(
                vector, model=model, sources=sources, limit=limit, window=self.window
            )
            found += _qualified(agent, hits)
        if self.many:  # one pool ordered by cosine, so ties do not depend on the agents' order
            found.sort(key=lambda c: -c.score)
        return found

    def pieced(
        self,
        query: list[float],
        model: str,
        vector: Sequence[Candidate],
        keyword: Sequence[Candidate],
        *,
        weight: float,
        limit: int,
    ) -> tuple[list[Candidate], dict[str, int]]:
        """The vector leg with each note chunk scored with its best piece too
        (domain/note_pieces.py): the chunks of both legs re-scored, the best `limit` kept, so a
        note the keyword leg found whose best piece is near the question joins the vector leg.
        A chunk without pieces (a transcript's, or one whose pieces are not embedded yet) keeps
        its cosine. Also returns how many of the note candidates scored have no pieces yet, by
        agent ("" for a search of this agent's index alone)."""
        ids = list(dict.fromkeys(c.chunk_id for c in [*vector, *keyword] if has_pieces(c.source)))
        if not ids or weight <= 0:
            return list(vector), {}
        found: dict[ChunkId, tuple[float, float | None]] = {}
        for agent, store in self.vectored:
            if agent is None:
                found.update(store.piece_cosines(query, model=model, ids=ids))
                continue
            own = [unqualified(c) for c in ids if agent_of(c) == agent]
            scored = store.piece_cosines(query, model=model, ids=own) if own else {}
            found.update({qualified(agent, c): v for c, v in scored.items()})
        out: dict[ChunkId, Candidate] = {}
        for c in vector:  # their own cosine, as the vector leg computed it
            best = found.get(c.chunk_id, (c.score, None))[1]
            out[c.chunk_id] = replace(c, score=pieced_score(c.score, best, weight), best_piece=best)
        for c in keyword:
            if c.chunk_id not in out and c.chunk_id in found:
                cosine, best = found[c.chunk_id]
                out[c.chunk_id] = replace(
                    c, score=pieced_score(cosine, best, weight), best_piece=best
                )
        waiting = Counter(agent_of(c) for c, (_, best) in found.items() if best is None)
        return sorted(out.values(), key=lambda c: -c.score)[:limit], dict(sorted(waiting.items()))

    def keyword_only_warning(self, *, hybrid: bool) -> list[str]:
        """What the keyword-only agents contribute, said as it is (nothing to wait for)."""
        if not self.keyword_only:
            return []
        names = ", ".join(self.keyword_only)
        what = (
            f"{names}: keyword-only (indexed without an embedding provider, e.g. "
            '`provider: "none"` in its config)'
        )
        if not self.vectored:
            return [f"{what}: answering by keywords"]
        if not hybrid:
            return [f"{what}: a vector-only search (hybrid disabled) finds nothing in it"]
        return [f"{what}: searched through its keyword leg, the other agents through both legs"]

    def check_comparable(self, label: str) -> None:
        """Refuse a fused vector leg over indexes embedded with another model than the query."""
        others: list[str] = []
        for agent, store in self.vectored:
            meta = self._metas[agent] if agent in self._metas else store.meta()
            if meta is None or meta.dimensions is None:
                continue  # nothing embedded yet: the agent answers by keywords, like a new index
            stored = vector_label(meta.model, meta.provider_key)
            if stored != label:
                others.append(f"{agent} ({meta.provider}/{meta.model})")
        if others:
            raise AgentsNotComparable(
                f"cannot fuse these agents: the query is embedded with {label}, but "
                f"{', '.join(others)} recorded another embedding model; cosines of different "
                "models are not comparable. Search those agents separately, or index every "
                "agent with the same provider and model."
            )


def _qualified(agent: str | None, hits: list[Candidate]) -> list[Candidate]:
    if agent is None:
        return hits
    return [replace(c, chunk_id=qualified(agent, c.chunk_id)) for c in hits]


def unpieced_warning(unpieced: dict[str, int]) -> str:
    """What a search says of the notes it ranked by their cosine alone (no pieces yet), by agent
    when it read several: another agent's pieces come from that agent's own upkeep, never from
    an agent whose `query.pieceWeight` is 0."""
    total = sum(unpieced.values())
    if set(unpieced) == {""}:
        return (
            f"{total} of the notes ranked have no piece vectors yet: they rank by their own "
            "cosine until `memlane index`, `watch` or a server embeds their pieces"
        )
    by_agent = ", ".join(f"{agent}: {count}" for agent, count in unpieced.items())
    return (
        f"{total} of the notes ranked have no piece vectors yet ({by_agent}): they rank by their "
        "own cosine until each agent's `memlane index`, `watch` or server embeds their pieces "
        "(never, for an agent whose query.pieceWeight is 0)"
    )
