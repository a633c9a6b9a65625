"""The rerank study's split, its baseline fusion and two of its prototype rules."""

from __future__ import annotations

from memlane.bench.studies.fusion_study import half_of
from memlane.bench.studies.rerank_rules import RULES
from memlane.bench.studies.rerank_study import base_fusion, part_of
from memlane.domain.chunks import ChunkId
from memlane.domain.scoring import Fused


def fused(path: str, start: int, end: int, score: float) -> Fused:
    return Fused(
        chunk_id=ChunkId(f"{path}:{start}"),
        source="sessions",
        path=path,
        start_line=start,
        end_line=end,
        text="",
        vector_score=None,
        text_score=None,
        score=score,
    )


def test_locomo_splits_by_conversation_the_others_by_the_fixed_hash() -> None:
    assert part_of("locomo", 4, ("conv-43", "q")) == "tune"
    assert part_of("locomo", 5, ("conv-44", "q")) == "held"
    key = ("pooled", "q7")
    assert part_of("lme_pooled", 0, key) == ("tune" if half_of(key) == "A" else "held")


def test_the_baseline_is_the_default_fusion_of_the_recorded_legs() -> None:
    record = {
        "vector": [("a", 1, 2, 0.9, "x"), ("b", 1, 2, 0.89, "y"), ("c", 1, 2, 0.1, "z")],
        "keyword": [("b", 1, 2, 7.0, "y")],
    }

    ranked = base_fusion(record, {"x": "alpha", "y": "beta"})

    # The keyword leg returned every match (1 < the pool): x and z have evidence 0, not the floor.
    assert [f.chunk_id for f in ranked] == ["y", "x", "z"]
    assert ranked[0].text == "beta"


def test_session_diversity_keeps_the_order_of_each_session_first_hit() -> None:
    items = [fused("s1", 1, 3, 0.9), fused("s1", 4, 6, 0.8), fused("s2", 1, 3, 0.7)]

    out = RULES["div_p0.2_t5"](items, "q")

    assert [f.path for f in out] == ["s1", "s2", "s1"]


def test_the_successor_goes_second_within_the_margin() -> None:
    items = [fused("s1", 1, 3, 0.9), fused("s2", 1, 3, 0.8), fused("s1", 4, 6, 0.76)]

    out = RULES["succ_m0.05"](items, "q")

    assert [(f.path, f.start_line) for f in out] == [("s1", 1), ("s1", 4), ("s2", 1)]
