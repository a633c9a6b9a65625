"""Application: the search use case (read side; never goes through the message bus).

Pipeline: keyword leg (FTS5 bm25) and vector leg (cosine) each fetch `max_results ×
candidateMultiplier` candidates (at least `minCandidates` when both legs run); they are fused
(standardised scores by default, or the reference's weighted sum, or reciprocal-rank fusion),
decayed by age, diversified by MMR, filtered by min score and cut to `max_results`.
Bounded input: a query over MAX_QUERY_CHARS is refused, the vector leg embeds only the model's
window (`query_embedding_input`) and the keyword leg the first MAX_FTS_TERMS distinct terms.
Degraded modes are explicit: without a provider the search is keyword-only; a failing query
embedding or a dimension mismatch drops the vector leg with a warning instead of failing; while
the vector backfill is under way (a first index of a large history), a hybrid search answers by
keywords alone and a warning says how far the vectors are ("vectors 12,345 / 100,000 (12 %)"):
fused over part of the vectors, the chunks without one sink below the keyword ranking, and
measured on LoCoMo and XQuAD-zh that ranked worse than keywords alone at every coverage from
10 % to 75 % (bench/studies/partial_vectors.py). A vector-only search ranks the chunks embedded so
far.

Across agents (`stores`): every agent's index answers both legs with the searching agent's
query embedding; the candidates form one pool (ids qualified by agent) and are fused by the
single-index rule. An agent keyword-only by design (its index records no embedding provider:
`provider: "none"` in its config) joins through its keyword leg alone and a warning says so;
its missing vectors are no backfill to wait for (application/search_legs.py). Cosines of one
model are on one scale in every index; agents whose index recorded another model are refused.
bm25 is pooled raw: its idf comes from each index's own statistics, so it is comparable between
indexes of similar make-up, which the measurement in bench/studies/agents_split_bench.py showed to
be
the better bet than per-agent standardisation (the benchmark's alternative rule), which ranks
every agent's best keyword hit alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import structlog

from memlane.application.embedding_runtime import EmbeddingRuntime
from memlane.application.ports.embedding import EmbeddingError, EmbeddingProvider
from memlane.application.ports.index_store import DimensionMismatch, IndexStore, VectorProgress
from memlane.application.query_focus import vector_query
from memlane.application.reports import SearchMode, SearchResponse
from memlane.application.search_legs import AgentStore, Legs, unpieced_warning
from memlane.application.search_output import (
    checked_max_results,
    checked_min_score,
    response_mark,
    search_result,
)
from memlane.application.time_ranking import rank_by_time
from memlane.domain.confidence import (
    BACKGROUND_SAMPLE,
    Background,
    background_of,
)
from memlane.domain.config import MemorySettings, candidate_limit
from memlane.domain.decay import apply_temporal_decay
from memlane.domain.embedding import query_embedding_input
from memlane.domain.index_meta import vector_label
from memlane.domain.keywords import (
    MAX_FTS_TERMS,
    fts_query_terms,
    marks_only,
    stop_words_only,
    terms_left_out,
)
from memlane.domain.mmr import mmr_rerank
from memlane.domain.relevance import apply_relevance_floor, floor_for
from memlane.domain.scoring import (
    Fused,
    apply_min_score,
    rrf_merge,
    weighted_merge,
    zscore_merge,
)
from memlane.domain.search import (
    Candidate,
    SearchQuery,
    check_query_text,
    check_window,
)
from memlane.domain.sources import Source

log = structlog.get_logger()

# A hybrid search fuses both legs once at most this share of the chunks lacks a vector (a few
# chunks a provider keeps refusing must not hold an index at keywords forever). Measured
# (bench/studies/partial_vectors.py): with 2 % missing, fused still beat keywords alone on nDCG@10
# on
# every set and backfill order, losing no recall; at 3 % XQuAD-zh no longer did.
MISSING_VECTORS_TOLERATED: Final = 0.02


def waiting_for_vectors(progress: VectorProgress) -> bool:
    """Whether too many chunks still lack a vector for a fused ranking (see the module doc)."""
    return progress.missing > MISSING_VECTORS_TOLERATED * progress.total


class Searcher:
    """Runs hybrid searches against the index with the active provider."""

    def __init__(
        self, *, store: IndexStore, runtime: EmbeddingRuntime, settings: MemorySettings
    ) -> None:
        self._store = store
        self._runtime = runtime
        self._settings = settings

    def search(
        self,
        query: SearchQuery,
        *,
        now: float,
        citations: bool = False,
        stores: Sequence[AgentStore] | None = None,
    ) -> SearchResponse:
        """Return the best chunks for `query` (see module docstring). Raises InvalidQuery.

        `stores` names the agents' indexes to search together (each hit then carries its
        agent); None searches this agent's own index. Raises AgentsNotComparable when the
        vector leg runs and an agent's index was embedded with another model.
        """
        text = check_query_text(query.text)
        if marks_only(text):
            return self._nothing_asked(
                f"the query {text.strip()!r} holds no word, only punctuation or signs: nothing "
                "to search for; ask with the words that matter (a name, a topic, a term)"
            )
        fillers = stop_words_only(text)
        if fillers is not None:
            return self._nothing_asked(
                f"the query has only stop words ({', '.join(fillers)}): nothing to search for; "
                "ask with the words that matter (a name, a topic, a term from the notes)"
            )
        window = check_window(query.since, query.until)
        legs = Legs(stores, self._store, window)
        max_results = checked_max_results(query.max_results, self._settings.query.max_results)
        min_score = checked_min_score(query.min_score, self._settings.query.min_score)
        sources: Sequence[Source] = query.sources or self._settings.sources
        hybrid = self._settings.query.hybrid
        provider = self._runtime.usable  # None also while a failed provider cools down
        warnings: list[str] = []

        mode: SearchMode = (
            "keyword" if provider is None else ("hybrid" if hybrid.enabled else "vector")
        )
        if provider is not None:
            warnings += legs.keyword_only_warning(hybrid=mode == "hybrid")
            if not legs.vectored:  # every agent searched is keyword-only by design
                mode = "keyword"
        limit = candidate_limit(hybrid, max_results, fused=mode == "hybrid")
        if provider is not None and legs.many:
            legs.check_comparable(vector_label(provider.model, provider.key))
        keyword: list[Candidate] = []
        if mode != "vector":
            keyword = legs.keyword(text, sources, limit)
            if terms_left_out(text):
                warnings.append(
                    f"the query is long: the keyword search used its first {MAX_FTS_TERMS} "
                    "distinct terms"
                )
        vector: list[Candidate] = []
        background: Background | None = None
        # Counted once per search (a PostgreSQL store counts on every call).
        own_progress = (
            None
            if provider is None or not any(s is self._store for _, s in legs.vectored)
            else self._store.vector_progress(vector_label(provider.model, provider.key))
        )
        waiting = (
            self._waiting_for_vectors(provider, legs, own_progress)
            if provider is not None and mode == "hybrid"
            else None
        )
        if waiting is not None:
            warnings.append(
                f"{waiting.text()}: answering by keywords until the vectors are embedded "
                "(a fused ranking over part of them ranks worse than keywords alone; "
                "`memlane index`, `watch` or a server embeds the rest)"
            )
            mode = "keyword"
        elif provider is not None and mode != "keyword":
            vector, failed, query_vector = self._vector_leg(
                provider, text, sources, limit, warnings, legs
            )
            if vector and query_vector is not None:
                vector, unpieced = legs.pieced(
                    query_vector,
                    vector_label(provider.model, provider.key),
                    vector,
                    keyword,
                    weight=self._settings.query.piece_weight,
                    limit=limit,
                )
                if unpieced:
                    warnings.append(unpieced_warning(unpieced))
            if vector and query_vector is not None:
                background = self._background(provider, query_vector)
            if not failed:
                warnings += self._partial_vectors(own_progress)
            if failed and mode == "vector":
                # The vector leg failed: answer from keywords rather than nothing.
                keyword = legs.keyword(text, sources, limit)
            if failed:
                mode = "keyword"  # say what answered

        degraded = self._runtime.warning  # one line whenever the configured provider is not used
        if degraded is not None:
            warnings.insert(0, degraded)
        if not legs.many:
            warnings += self._first_index()
        # Fewer keyword hits than asked for: the leg returned every match (per agent, too).
        fused = self._fuse(mode, vector, keyword, keyword_exhaustive=len(keyword) < limit)
        decay = hybrid.temporal_decay
        if decay.enabled:
            fused = apply_temporal_decay(fused, now=now, half_life_days=decay.half_life_days)
        text_weight = 1.0 if mode == "keyword" else hybrid.text_weight
        if mode == "hybrid" and hybrid.fusion != "weighted":
            # Rank-based and standardised scores are relative: the best keyword hit always stays.
            text_weight = 0.0
        kept = apply_min_score(fused, min_score, text_weight=text_weight)
        kept, time_words = rank_by_time(
            kept,
            text,
            settings=self._settings.query,
            as_of=now if query.as_of is None else query.as_of,
            explain=query.explain,
        )
        # Fused scores are relative to this query's pool; the floor asks for absolute evidence.
        floor = floor_for(
            self._settings.query.relevance_floor,
            provider=provider.id if provider is not None else None,
            model=provider.model if provider is not None else None,
            vector_leg=bool(vector),  # no cosines (keyword-only, failed leg): no floor
            term_share=self._settings.query.relevance_term_share,
            keyword_term_share=self._settings.query.relevance_keyword_term_share,
        )
        # Without MMR only the first max_results count, so the floor judges no more than those.
        kept = apply_relevance_floor(
            kept, floor, text, limit=None if hybrid.mmr.enabled else max_results
        )
        if hybrid.mmr.enabled:  # diversify among the results that qualify, not the whole pool
            kept = mmr_rerank(kept, lambda_=hybrid.mmr.lambda_, limit=max_results)
        kept = kept[:max_results]
        terms = fts_query_terms(text)  # where each snippet is placed
        results = [
            search_result(
                item,
                rank,
                citations=citations,
                explain=query.explain,
                agents=legs.many,
                background=background,
                terms=terms,
            )
            for rank, item in enumerate(kept, start=1)
        ]
        return SearchResponse(
            results=results,
            provider=provider.id if provider is not None else "none",
            model=provider.model if provider is not None else None,
            mode=mode,
            fallback=self._runtime.selection.fallback_from,
            warnings=tuple(warnings),
            time_words=time_words,
            no_strong_match=response_mark(mode, vector, keyword, background),
        )

    def _nothing_asked(self, warning: str) -> SearchResponse:
        """The answer to a query of stop words or marks only: no hits (whatever shares "what",
        "is", "it" would come back ranked as if relevant, issue #30) and a warning saying why."""
        provider = self._runtime.usable
        hybrid = self._settings.query.hybrid.enabled
        return SearchResponse(
            results=[],
            provider=provider.id if provider is not None else "none",
            model=provider.model if provider is not None else None,
            mode="keyword" if provider is None else ("hybrid" if hybrid else "vector"),
            fallback=self._runtime.selection.fallback_from,
            warnings=(warning,),
        )

    def _background(self, provider: EmbeddingProvider, query: list[float]) -> Background | None:
        """The query's cosines with this agent's fixed sample of the index, summarised."""
        label = vector_label(provider.model, provider.key)
        try:
            cosines = self._store.background_cosines(query, model=label, limit=BACKGROUND_SAMPLE)
        except DimensionMismatch:
            return None
        return background_of(cosines)

    def _vector_leg(
        self,
        provider: EmbeddingProvider,
        text: str,
        sources: Sequence[Source],
        limit: int,
        warnings: list[str],
        legs: Legs,
    ) -> tuple[list[Candidate], bool, list[float] | None]:
        """The vector leg's candidates, whether it failed (keywords must answer alone), and the
        query's embedding."""
        # Without the words most chunks hold (application/query_focus.py).
        share = self._settings.query.common_word_share
        asked = vector_query(self._store, text, share=share).text
        # Only what the model reads: a pasted page must not be embedded window by window.
        embedded = query_embedding_input(asked, provider.max_input_tokens)
        if len(embedded) < len(asked):
            warnings.append(
                f"the query is long: the vector search embedded its first {len(embedded)} of "
                f"{len(asked)} characters"
            )
        try:
            vector = provider.embed_query(embedded)
        except EmbeddingError as exc:
            log.warning("query_embedding_failed", provider=provider.id, error=str(exc))
            self._runtime.note_failure(exc)  # the runtime's warning says it, and for how long
            return [], True, None
        self._runtime.note_success()
        if not any(vector):
            return [], False, None
        try:
            found = legs.vector(vector, vector_label(provider.model, provider.key), sources, limit)
        except DimensionMismatch as exc:
            warnings.append(f"vector search skipped until the index is re-embedded: {exc}")
            return [], True, None
        return found, False, vector

    def _first_index(self) -> list[str]:
        """A warning while the first index is still being written (the search answers from the
        files indexed so far), or was interrupted and waits for the next sync."""
        first = self._store.first_index()
        if first is None:
            return []
        if first.running is False:
            return [
                f"the first index was interrupted ({first.text()}): results cover the files "
                "indexed so far; the next sync (`memlane index`) completes it"
            ]
        return [f"{first.text()}: results cover the files indexed so far"]

    def _waiting_for_vectors(
        self, provider: EmbeddingProvider, legs: Legs, own: VectorProgress | None
    ) -> VectorProgress | None:
        """The vector progress of an index searched that is too far from complete to fuse."""
        label = vector_label(provider.model, provider.key)
        for _, store in legs.vectored:
            progress = (
                own if store is self._store and own is not None else store.vector_progress(label)
            )
            if waiting_for_vectors(progress):
                return progress
        return None

    @staticmethod
    def _partial_vectors(progress: VectorProgress | None) -> list[str]:
        """A warning while some chunks have no vector of the model yet."""
        if progress is None or progress.complete:
            return []
        return [
            f"{progress.text()}: the vector leg ranks only the chunks embedded so far, keywords "
            "rank all (`memlane index`, `watch` or a server embeds the rest)"
        ]

    def _fuse(
        self,
        mode: SearchMode,
        vector: list[Candidate],
        keyword: list[Candidate],
        *,
        keyword_exhaustive: bool = False,
    ) -> list[Fused]:
        hybrid = self._settings.query.hybrid
        if mode == "keyword":
            return weighted_merge([], keyword, vector_weight=0.0, text_weight=1.0)
        if mode == "vector":
            return weighted_merge(vector, [], vector_weight=1.0, text_weight=0.0)
        if hybrid.fusion == "rrf":
            return rrf_merge(vector, keyword, k=hybrid.rrf_k)
        if hybrid.fusion == "zscore":
            return zscore_merge(
                vector,
                keyword,
                vector_weight=hybrid.vector_weight,
                text_weight=hybrid.text_weight,
                keyword_exhaustive=keyword_exhaustive,
            )
        return weighted_merge(
            vector, keyword, vector_weight=hybrid.vector_weight, text_weight=hybrid.text_weight
        )
