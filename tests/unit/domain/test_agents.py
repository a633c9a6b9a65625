"""Agent ids of a search across agents, qualified chunk ids, and per-agent keyword scales."""

from __future__ import annotations

import pytest

from memlane.domain.agents import MAX_AGENTS, agent_of, parse_agents, qualified
from memlane.domain.chunks import ChunkId
from memlane.domain.errors import InvalidQuery
from memlane.domain.scoring import Fused, rrf_merge, weighted_merge, zscore_merge
from memlane.domain.search import Candidate


class TestParseAgents:
    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            ("a,b", ("a", "b")),
            (" a , b ,a,", ("a", "b")),
            (["main", "ops-2", "main"], ("main", "ops-2")),
        ],
    )
    def test_lists_and_comma_strings(self, value: object, expected: tuple[str, ...]) -> None:
        assert parse_agents(value) == expected

    @pytest.mark.parametrize(
        "value", ["", " , ", [], [1], 5, None, ["../etc"], ["a b"], [f"a{i}" for i in range(33)]]
    )
    def test_anything_else_is_an_invalid_query(self, value: object) -> None:
        with pytest.raises(InvalidQuery):
            parse_agents(value)

    def test_the_limit_is_inclusive(self) -> None:
        assert len(parse_agents([f"a{i}" for i in range(MAX_AGENTS)])) == MAX_AGENTS


class TestQualifiedIds:
    def test_the_agent_comes_back_and_same_ids_of_two_agents_differ(self) -> None:
        one, two = qualified("a", ChunkId("c1")), qualified("b", ChunkId("c1"))

        assert one != two
        assert (agent_of(one), agent_of(two), agent_of(ChunkId("c1"))) == ("a", "b", "")


def _kw(agent: str, n: int, rank: float) -> Candidate:
    return Candidate(
        qualified(agent, ChunkId(f"k{n}")), "memory", f"{agent}/{n}.md", 1, 2, "t", rank
    )


def _vec(agent: str, n: int, cosine: float) -> Candidate:
    return Candidate(
        qualified(agent, ChunkId(f"k{n}")), "memory", f"{agent}/{n}.md", 1, 2, "t", cosine
    )


KEYWORD_A = [_kw("a", 1, -9.0), _kw("a", 2, -4.0), _kw("a", 3, -1.0)]
KEYWORD_B = [_kw("b", 1, -3.0), _kw("b", 2, -2.5), _kw("b", 4, -0.5)]
VECTOR = [_vec("a", 1, 0.81), _vec("b", 1, 0.86), _vec("a", 2, 0.78), _vec("b", 4, 0.75)]


def _rescaled(cands: list[Candidate], factor: float, shift: float) -> list[Candidate]:
    """bm25 of the same documents in a store with other statistics: a positive affine change."""
    return [
        Candidate(c.chunk_id, c.source, c.path, 1, 2, "t", c.score * factor - shift) for c in cands
    ]


def _ranking(fused: list[Fused]) -> list[tuple[str, float]]:
    return [(f.chunk_id, round(f.score, 12)) for f in fused]


class TestPerAgentKeywordScales:
    """The fusion rules' per-agent option (`group`): one agent's bm25 scale cannot decide.

    The search pools bm25 raw instead (measured better: bench/agents_split_bench.py); the
    option stays for that comparison."""

    def test_zscore_ranking_ignores_one_agents_bm25_scale(self) -> None:
        before = zscore_merge(VECTOR, KEYWORD_A + KEYWORD_B, vector_weight=0.5,
                              text_weight=0.5, group=agent_of)  # fmt: skip
        after = zscore_merge(VECTOR, KEYWORD_A + _rescaled(KEYWORD_B, 6.0, 2.0),
                             vector_weight=0.5, text_weight=0.5, group=agent_of)  # fmt: skip
        ungrouped = zscore_merge(VECTOR, KEYWORD_A + _rescaled(KEYWORD_B, 6.0, 2.0),
                                 vector_weight=0.5, text_weight=0.5)  # fmt: skip

        assert _ranking(after) == _ranking(before)
        assert [f.chunk_id for f in ungrouped] != [f.chunk_id for f in before]

    def test_cosines_stay_one_pool_across_agents(self) -> None:
        """Same model, same scale: a closer vector of agent b outranks a of its own accord."""
        closer = [*VECTOR[:1], _vec("b", 1, 0.95), *VECTOR[2:]]
        keyword_free = zscore_merge(VECTOR, [], vector_weight=0.5, text_weight=0.5, group=agent_of)
        moved = zscore_merge(closer, [], vector_weight=0.5, text_weight=0.5, group=agent_of)

        assert [f.chunk_id for f in keyword_free][:2] == [VECTOR[1].chunk_id, VECTOR[0].chunk_id]
        assert moved[0].chunk_id == VECTOR[1].chunk_id
        assert moved[0].score > keyword_free[0].score

    def test_weighted_and_rrf_normalise_and_rank_keywords_per_agent(self) -> None:
        weighted = weighted_merge([], KEYWORD_A + _rescaled(KEYWORD_B, 0.1, 0.0),
                                  vector_weight=0.0, text_weight=1.0, group=agent_of)  # fmt: skip
        rrf = rrf_merge([], KEYWORD_A + _rescaled(KEYWORD_B, 0.1, 0.0), group=agent_of)

        best = {KEYWORD_A[0].chunk_id, KEYWORD_B[0].chunk_id}
        assert {f.chunk_id for f in weighted if f.text_score == 1.0} == best
        assert {f.chunk_id for f in rrf[:2]} == best
        assert rrf[0].score == rrf[1].score
