"""Application: what a search takes from its caller and hands back.

The bounds a caller gives (`maxResults`, `minScore`, checked here because callers outside the
type checker, tools and gRPC, may pass anything), each result as callers see it (snippet,
citation, explanation, agent, time, confidence) and the response's "no strong match" mark.
Split from the search use case (queries.py), which ranks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from memlane.application.reports import SearchMode
from memlane.domain.agents import agent_of
from memlane.domain.chunk_times import iso_time
from memlane.domain.confidence import Background, legs_disagree, no_strong_match, top_gap
from memlane.domain.config import MAX_RESULTS_LIMIT
from memlane.domain.errors import InvalidQuery
from memlane.domain.scoring import Fused
from memlane.domain.search import Candidate, SearchResult
from memlane.domain.snippets import citation_for, focused_snippet


def checked_max_results(value: int | None, default: int) -> int:
    """`maxResults` as asked (None: the setting); InvalidQuery unless a whole number in range."""
    if value is None:
        return default
    raw: object = value  # callers outside mypy (tools, gRPC) may pass anything
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise InvalidQuery("maxResults must be a whole number")
    if not 1 <= value <= MAX_RESULTS_LIMIT:
        raise InvalidQuery(f"maxResults must be between 1 and {MAX_RESULTS_LIMIT}")
    return value


def checked_min_score(value: float | None, default: float) -> float:
    """`minScore` as asked (None: the setting); InvalidQuery unless a number in [0, 1]."""
    if value is None:
        return default
    raw: object = value
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
        raise InvalidQuery("minScore must be a number between 0 and 1")
    if not 0.0 <= value <= 1.0:
        raise InvalidQuery("minScore must be between 0 and 1")
    return float(value)


def response_mark(
    mode: SearchMode,
    vector: Sequence[Candidate],
    keyword: Sequence[Candidate],
    background: Background | None,
) -> bool | None:
    """The response's mark (domain/confidence.py): by the legs' agreement in a hybrid search,
    by the vector leg's top gap in a vector-only one; not judged by keywords alone."""
    if mode == "keyword" or not vector:
        return None
    by_cosine = sorted(vector, key=lambda c: -c.score)
    if mode == "hybrid":
        by_rank = sorted(keyword, key=lambda c: c.score)  # FTS5 ranks: lower is better
        return legs_disagree([c.chunk_id for c in by_cosine], [c.chunk_id for c in by_rank])
    return no_strong_match(top_gap([c.score for c in by_cosine], background))


def search_result(
    item: Fused,
    rank: int,
    *,
    citations: bool,
    explain: bool,
    agents: bool = False,
    background: Background | None = None,
    terms: Sequence[str] = (),
) -> SearchResult:
    """One fused chunk as callers get it: its snippet (where the query's keyword `terms` are,
    with its citation when asked), the explanation, the agent, the time and the vector score's
    standing as `confidence`."""
    snippet = focused_snippet(item.text, terms)
    citation = citation_for(item.path, item.start_line, item.end_line) if citations else None
    if citation is not None:
        snippet = f"{_trimmed(snippet)}\n\nSource: {citation}"
    explanation = item.explanation(mmr_rank=rank) if explain else None
    return SearchResult(
        path=item.path,
        start_line=item.start_line,
        end_line=item.end_line,
        score=round(item.score, 6),
        snippet=snippet,
        source=item.source,
        citation=citation,
        explanation=explanation,
        agent=agent_of(item.chunk_id) if agents else None,
        time=iso_time(item.time_start, item.time_end),
        confidence=(
            None
            if background is None or item.vector_score is None
            else round(background.standing(item.vector_score), 2)
        ),
    )


def _trimmed(snippet: str) -> str:
    """`snippet` without its trailing whitespace and leading blank lines, before the citation
    line; the first line's indentation stays (code in a snippet keeps its shape)."""
    body = snippet.rstrip()
    first = len(body) - len(body.lstrip())  # where the first visible character is
    return body[body.rfind("\n", 0, first) + 1 :]
