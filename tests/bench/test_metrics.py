"""Metric values on hand-made rankings, checked against values worked out by hand."""

from __future__ import annotations

import math

import pytest

from memlane.bench import metrics

GOLD_LINES = frozenset({("s1", 2), ("s1", 11), ("s2", 9)})
HITS = [("s1", 1, 3), ("s2", 4, 4), ("s1", 10, 12)]


class TestDistinctIds:
    def test_maps_paths_to_ids_and_keeps_first_occurrence(self) -> None:
        hits = [("a.md", 1, 2), ("b.md", 1, 1), ("a.md", 5, 6), ("c.md", 1, 1)]
        ranked = metrics.distinct_ids(hits, {"a.md": "A", "b.md": "B"})
        assert ranked == ["A", "B", "c.md"]


class TestDocumentLevel:
    def test_recall_any_needs_one_gold_id_in_the_top_k(self) -> None:
        ranked = ["x", "g1", "y"]
        assert metrics.recall_any(ranked, {"g1", "g2"}, 1) == 0.0
        assert metrics.recall_any(ranked, {"g1", "g2"}, 2) == 1.0

    def test_recall_all_needs_every_gold_id_in_the_top_k(self) -> None:
        assert metrics.recall_all(["g2", "x", "g1"], {"g1", "g2"}, 2) == 0.0
        assert metrics.recall_all(["g2", "x", "g1"], {"g1", "g2"}, 3) == 1.0
        assert metrics.recall_all(["g2"], set(), 3) == 0.0

    def test_recall_is_the_fraction_of_gold_found(self) -> None:
        assert metrics.recall(["g1", "x", "y"], {"g1", "g2"}, 3) == 0.5
        assert metrics.recall(["x", "g1"], {"g1", "g2"}, 1) == 0.0

    def test_ndcg_with_binary_gains(self) -> None:
        value = metrics.ndcg(["x", "g1", "g2"], {"g1": 1, "g2": 1}, 10)
        expected = (1 / math.log2(3) + 1 / 2) / (1 + 1 / math.log2(3))
        assert value == pytest.approx(expected, abs=1e-12)

    def test_ndcg_with_graded_gains_puts_the_best_first_in_the_ideal(self) -> None:
        value = metrics.ndcg(["b", "a"], {"a": 2, "b": 1}, 10)
        expected = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
        assert value == pytest.approx(expected, abs=1e-12)

    def test_ndcg_is_one_for_a_perfect_ranking_and_ignores_ranks_past_k(self) -> None:
        assert metrics.ndcg(["g1", "g2", "x"], {"g1": 1, "g2": 1}, 10) == pytest.approx(1.0)
        assert metrics.ndcg(["x", "g1"], {"g1": 1}, 1) == 0.0

    def test_mrr_is_the_reciprocal_rank_of_the_first_gold_within_k(self) -> None:
        assert metrics.mrr(["x", "y", "g"], {"g"}, 10) == pytest.approx(1 / 3)
        assert metrics.mrr(["x", "y", "g"], {"g"}, 2) == 0.0


class TestTurnLevel:
    def test_turn_recall_counts_gold_lines_inside_hit_ranges(self) -> None:
        assert metrics.turn_recall(HITS, GOLD_LINES, 1) == pytest.approx(1 / 3)
        assert metrics.turn_recall(HITS, GOLD_LINES, 3) == pytest.approx(2 / 3)

    def test_a_gold_line_in_another_file_is_not_covered(self) -> None:
        assert metrics.turn_recall([("s2", 1, 3)], frozenset({("s1", 2)}), 1) == 0.0

    def test_turn_hit_is_any_covered_gold_line(self) -> None:
        assert metrics.turn_hit(HITS, GOLD_LINES, 1) == 1.0
        assert metrics.turn_hit(HITS[1:], GOLD_LINES, 1) == 0.0

    def test_budget_walk_cuts_the_last_hit_at_the_budget(self) -> None:
        assert metrics.cut_to_budget(HITS, 4) == [("s1", 1, 3), ("s2", 4, 4)]
        assert metrics.cut_to_budget(HITS, 5) == [("s1", 1, 3), ("s2", 4, 4), ("s1", 10, 10)]
        assert metrics.cut_to_budget(HITS, 2) == [("s1", 1, 2)]

    def test_turn_recall_at_a_line_budget(self) -> None:
        # budget 5 keeps s1:10 only of the third hit, so s1:11 is not covered
        assert metrics.turn_recall_at_budget(HITS, GOLD_LINES, 5) == pytest.approx(1 / 3)
        assert metrics.turn_recall_at_budget(HITS, GOLD_LINES, 6) == pytest.approx(2 / 3)
        assert metrics.turn_recall_at_budget(HITS, GOLD_LINES, 1) == 0.0

    def test_turn_ndcg_gives_no_gain_to_a_hit_repeating_covered_lines(self) -> None:
        hits = [("s1", 1, 3), ("s1", 2, 2), ("s1", 11, 11)]
        expected = (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3) + 1 / math.log2(4))
        assert metrics.turn_ndcg(hits, GOLD_LINES, 10) == pytest.approx(expected, abs=1e-12)

    def test_mean_lines_per_hit(self) -> None:
        assert metrics.mean_lines_per_hit(HITS) == pytest.approx((3 + 1 + 3) / 3)
        assert metrics.mean_lines_per_hit(HITS, 2) == pytest.approx(2.0)
        assert metrics.mean_lines_per_hit([]) == 0.0


class TestPairedBootstrap:
    def test_identical_configurations_differ_by_nothing(self) -> None:
        cmp = metrics.paired_bootstrap([0.5, 1.0, 0.0], [0.5, 1.0, 0.0], resamples=500)
        assert (cmp.mean_diff, cmp.ci_low, cmp.ci_high, cmp.p_value) == (0.0, 0.0, 0.0, 1.0)

    def test_a_uniform_win_is_significant(self) -> None:
        cmp = metrics.paired_bootstrap([1.0] * 5, [0.0] * 5, resamples=500)
        assert (cmp.mean_diff, cmp.ci_low, cmp.ci_high, cmp.p_value) == (1.0, 1.0, 1.0, 0.0)

    def test_p_value_matches_the_chance_of_drawing_no_win(self) -> None:
        # diffs [1, 0, 0, 0]: a resample has mean <= 0 iff it never draws the 1: (3/4)^4 = 0.316
        cmp = metrics.paired_bootstrap([1.0, 0.0, 0.0, 0.0], [0.0] * 4, seed=7)
        assert cmp.resamples == 10_000
        assert cmp.mean_diff == pytest.approx(0.25)
        assert cmp.p_value == pytest.approx(2 * 0.75**4, abs=0.03)
        assert cmp.ci_low == 0.0

    def test_same_seed_gives_the_same_interval(self) -> None:
        a, b = [0.2, 0.9, 0.4, 0.7, 0.1], [0.3, 0.5, 0.4, 0.2, 0.0]
        first = metrics.paired_bootstrap(a, b, seed=3, resamples=2000)
        again = metrics.paired_bootstrap(a, b, seed=3, resamples=2000)
        assert first == again

    def test_unpaired_lengths_are_refused(self) -> None:
        with pytest.raises(ValueError, match="same length"):
            metrics.paired_bootstrap([1.0], [1.0, 0.0])
