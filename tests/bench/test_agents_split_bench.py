"""The per-agent keyword scales the agents-split benchmark compares with pooled raw bm25.

The search pools bm25 raw across agents (measured better by the benchmark); the per-agent rules
live in the benchmark only, and must behave as the comparison says: one agent's bm25 scale
cannot decide the ranking.
"""

from __future__ import annotations

from memlane.bench.studies.agents_split_bench import _per_agent_keyword, _per_agent_zscore
from memlane.domain.agents import qualified
from memlane.domain.chunks import ChunkId
from memlane.domain.scoring import zscore_merge
from memlane.domain.search import Candidate


def _cand(agent: str, n: int, score: float) -> Candidate:
    return Candidate(
        qualified(agent, ChunkId(f"k{n}")), "memory", f"{agent}/{n}.md", 1, 2, "t", score
    )


KEYWORD_A = [_cand("a", 1, -9.0), _cand("a", 2, -4.0), _cand("a", 3, -1.0)]
KEYWORD_B = [_cand("b", 1, -3.0), _cand("b", 2, -2.5), _cand("b", 4, -0.5)]
VECTOR = [_cand("a", 1, 0.81), _cand("b", 1, 0.86), _cand("a", 2, 0.78), _cand("b", 4, 0.75)]


def _rescaled(cands: list[Candidate], factor: float, shift: float) -> list[Candidate]:
    """bm25 of the same documents in a store with other statistics: a positive affine change."""
    return [
        Candidate(c.chunk_id, c.source, c.path, 1, 2, "t", c.score * factor - shift) for c in cands
    ]


def _paths(lines: list[tuple[str, int, int]]) -> list[str]:
    return [path for path, _, _ in lines]


def test_per_agent_zscore_ignores_one_agents_bm25_scale() -> None:
    before = _per_agent_zscore(VECTOR, KEYWORD_A + KEYWORD_B)
    after = _per_agent_zscore(VECTOR, KEYWORD_A + _rescaled(KEYWORD_B, 6.0, 2.0))
    pooled = zscore_merge(
        VECTOR, KEYWORD_A + _rescaled(KEYWORD_B, 6.0, 2.0), vector_weight=0.5, text_weight=0.5
    )

    assert after == before
    assert [f.path for f in pooled] != _paths(before)


def test_without_keywords_it_is_the_domains_zscore_fusion() -> None:
    """Cosines stay one pool across agents: a closer vector of agent b outranks a's."""
    closer = [VECTOR[0], _cand("b", 1, 0.95), *VECTOR[2:]]

    for near in (VECTOR, closer):
        domain = zscore_merge(near, [], vector_weight=0.5, text_weight=0.5)
        assert _paths(_per_agent_zscore(near, [])) == [f.path for f in domain]
    assert _paths(_per_agent_zscore(closer, []))[0] == "b/1.md"


def test_per_agent_keyword_puts_each_agents_best_hit_first() -> None:
    ranked = _paths(_per_agent_keyword(KEYWORD_A + _rescaled(KEYWORD_B, 0.1, 0.0)))

    assert set(ranked[:2]) == {"a/1.md", "b/1.md"}
    assert len(ranked) == len(KEYWORD_A) + len(KEYWORD_B)
