"""The partial-vectors study's bookkeeping: which chunks lack a vector, and the threshold read."""

from __future__ import annotations

from typing import Any

import pytest

from memlane.bench.studies.partial_vectors import StoredChunk, backfill_order, missing, thresholds

CHUNKS = [
    StoredChunk("a1", "sessions/a.jsonl", 1),
    StoredChunk("a2", "sessions/a.jsonl", 40),
    StoredChunk("b1", "sessions/b.jsonl", 1),
    StoredChunk("b2", "sessions/b.jsonl", 40),
    StoredChunk("c1", "memory/docs/c.md", 1),
]
STAMPS = {"sessions/a.jsonl": "2024-03-01T00:00:00Z", "sessions/b.jsonl": "2023-01-01T00:00:00Z"}


def test_recent_order_embeds_undated_notes_then_the_oldest_files_first() -> None:
    assert backfill_order("recent", CHUNKS, STAMPS, 0) == ["c1", "b1", "b2", "a1", "a2"]


def test_files_order_keeps_each_files_chunks_together_and_depends_on_the_seed() -> None:
    orders = [backfill_order("files", CHUNKS, STAMPS, seed) for seed in range(8)]

    for order in orders:
        assert abs(order.index("a1") - order.index("a2")) == 1
        assert order.index("a1") < order.index("a2")
    assert len({tuple(o) for o in orders}) > 1


def test_random_order_is_a_seeded_permutation() -> None:
    first = backfill_order("random", CHUNKS, STAMPS, 3)

    assert first == backfill_order("random", CHUNKS, STAMPS, 3)
    assert sorted(first) == sorted(c.chunk_id for c in CHUNKS)


def test_unknown_order_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown order"):
        backfill_order("newest", CHUNKS, STAMPS, 0)


def test_missing_takes_the_tail_of_the_backfill_order() -> None:
    order = [f"c{i}" for i in range(200)]

    assert missing(order, 1.0) == set()
    assert missing(order, 0.999) == set()  # 0.2 of a chunk rounds to none
    assert missing(order, 0.99) == {"c198", "c199"}
    assert len(missing(order, 0.75)) == 50


def _row(ndcg_ci: tuple[float, float], recall_ci: tuple[float, float]) -> dict[str, Any]:
    return {"vs_keyword": {"ndcg@10": {"ci": list(ndcg_ci)}, "recall@5": {"ci": list(recall_ci)}}}


def test_threshold_is_the_largest_missing_share_with_no_loss_at_any_higher_coverage() -> None:
    plan = [("random", p, [0]) for p in (0.9, 0.95, 0.99, 1.0)]
    rows = {
        "random@0.9": _row((-0.03, -0.01), (-0.02, 0.01)),  # worse on nDCG
        "random@0.95": _row((-0.01, 0.01), (0.0, 0.02)),  # neither
        "random@0.99": _row((0.01, 0.03), (-0.01, 0.02)),  # better on nDCG
        "random@1": _row((0.02, 0.04), (0.0, 0.02)),
    }

    found = thresholds(rows, plan)

    assert found == {"random": {"not_worse": 0.05, "better": 0.01}}


def test_threshold_is_zero_when_even_the_closest_coverage_loses() -> None:
    plan = [("files", p, [0]) for p in (0.99, 0.999)]
    rows = {
        "files@0.99": _row((0.0, 0.1), (0.0, 0.1)),
        "files@0.999": _row((-0.02, -0.01), (0.0, 0.1)),
    }

    assert thresholds(rows, plan)["files"]["not_worse"] == 0.0
