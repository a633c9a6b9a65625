"""The weight sweep's bookkeeping: the fixed query split and the worst-margin arithmetic."""

from __future__ import annotations

import math

import pytest

from memlane.bench.studies.fusion_study import (
    adaptive_z,
    half_means,
    half_of,
    shipped,
    worst_margin,
)


def test_half_of_is_fixed_and_splits_queries_roughly_evenly() -> None:
    keys = [("unit", f"q{i}") for i in range(1000)]

    halves = [half_of(k) for k in keys]

    assert halves == [half_of(k) for k in keys]
    assert set(halves) == {"A", "B"}
    assert 400 < halves.count("A") < 600


def test_half_means_average_each_half_and_all_queries() -> None:
    a = next(("u", f"q{i}") for i in range(100) if half_of(("u", f"q{i}")) == "A")
    b = next(("u", f"q{i}") for i in range(100) if half_of(("u", f"q{i}")) == "B")

    means = half_means([(a, {"m": 1.0}), (b, {"m": 0.0}), (b, {"m": 0.5})], "m")

    assert means == {"A": 1.0, "B": 0.25, "all": 0.5}


def test_half_means_of_an_empty_half_is_nan() -> None:
    a = next(("u", f"q{i}") for i in range(100) if half_of(("u", f"q{i}")) == "A")

    assert math.isnan(half_means([(a, {"m": 1.0})], "m")["B"])


def test_worst_margin_is_the_smallest_gap_to_the_better_single_leg() -> None:
    rows = [
        {"keyword": {"all": 0.9}, "vector": {"all": 0.8}, "z": {"all": 0.95}},  # +0.05
        {"keyword": {"all": 0.7}, "vector": {"all": 0.9}, "z": {"all": 0.85}},  # -0.05
    ]

    assert worst_margin(rows, "z", "all") == pytest.approx(-0.05)


def test_adaptive_weights_follow_the_leg_whose_best_hit_stands_out() -> None:
    """g is a keyword outlier (bm25 evidence 20 among 1-3) and the vector leg's worst; c is the
    vector leg's best by a hair. Equal weights pick c; the keyword leg's confidence (its top z)
    is larger than the crowded vector leg's, so the adaptive rule picks g."""
    ids = "abcdefgh"
    evidence = [2.0, 2.0, 3.0, 1.0, 1.0, 1.0, 20.0, 1.0]
    cosine = [0.85, 0.89, 0.89, 0.78, 0.88, 0.88, 0.72, 0.83]
    keyword = [("p", 1, 1, x, c) for c, x in zip(ids, evidence, strict=True)]
    vector = [("p", 1, 1, x, c) for c, x in zip(ids, cosine, strict=True)]

    assert shipped("zscore", 0.5, 0.5)(vector, keyword, 10)[0] == "c"
    assert adaptive_z("max")(vector, keyword, 10)[0] == "g"


def test_adaptive_weights_reject_an_unknown_confidence() -> None:
    with pytest.raises(ValueError, match="nope"):
        adaptive_z("nope")([("p", 1, 1, 0.5, "a")], [], 10)
