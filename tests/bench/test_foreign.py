"""Foreign-query bookkeeping: pair names, the replayed pipeline and the per-pair summary."""

from __future__ import annotations

from typing import Any

from memlane.bench.studies.foreign import MAX_RESULTS, fused_pool, parse_pair, pick, replay, summary


def test_a_pair_names_queries_then_memory_and_a_bare_set_is_its_own() -> None:
    assert parse_pair("scifact:locomo") == ("scifact", "locomo")
    assert parse_pair("locomo") == ("locomo", "locomo")


def record(n: int) -> dict[str, Any]:
    """n chunks in both legs: chunk i has cosine 0.70 + 0.01 i and bm25 rank −i."""
    return {
        "vector": [[f"p{i}.md", 1, 1, 0.70 + 0.01 * i, f"c{i}", "memory"] for i in range(n)],
        "keyword": [[f"p{i}.md", 1, 1, -float(i), f"c{i}", "memory"] for i in range(n)],
    }


def test_replay_without_a_floor_returns_the_first_six_fused_hits() -> None:
    pool = fused_pool(record(20), "zscore")

    hits = replay(pool, "zscore", 0.0, (None, None))

    assert [h.chunk_id for h in hits] == [h.chunk_id for h in pool[:MAX_RESULTS]]


def test_replay_with_a_floor_keeps_only_hits_with_enough_evidence() -> None:
    pool = fused_pool(record(20), "zscore")

    # Cosine 0.70 + 0.01 i >= 0.875 from i = 18 on; bm25 evidence i >= 19 from i = 19 on.
    hits = replay(pool, "zscore", 0.0, (0.875, 19.0))

    assert sorted(h.chunk_id for h in hits) == ["c18", "c19"]


def test_summary_counts_hits_per_query_and_empty_answers() -> None:
    assert summary([0, 6, 3, 0]) == {"queries": 4, "hits_per_query": 2.25, "share_zero": 0.5}


def test_pick_takes_the_fewest_foreign_hits_within_the_allowed_loss_on_half_a() -> None:
    none, loose, tight, strict = (
        "cos>=- | bm25>=-",
        "cos>=0.800 | bm25>=-",
        "cos>=0.810 | bm25>=-",
        "cos>=0.820 | bm25>=-",
    )
    table = {
        "real": {
            none: {"A": [0.60], "B": [0.0]},
            loose: {"A": [0.60], "B": [0.0]},
            tight: {"A": [0.595], "B": [0.0]},  # loss 0.005: allowed
            strict: {"A": [0.50], "B": [0.0]},  # loss 0.1: not allowed
        },
        "foreign": {
            none: {"A": [6.0], "B": [6.0]},
            loose: {"A": [3.0], "B": [9.0]},
            tight: {"A": [1.0], "B": [9.0]},  # half B is never looked at
            strict: {"A": [0.0], "B": [0.0]},
        },
    }

    assert pick(table, "real", 0.007) == tight
    assert pick(table, "real", 0.0) == loose
