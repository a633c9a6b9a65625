"""The runner end to end over a hand-written manager: configs per mode, stores, scores, report."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest

from memlane.bench import report
from memlane.bench.datasets.model import Dataset, DocFile, Query, Unit
from memlane.bench.runner import (
    DatasetRun,
    RunOptions,
    deep_merge,
    mode_config,
    run_unit,
    select_queries,
    select_units,
)
from memlane.domain.search import SearchResult


@dataclass(frozen=True, slots=True)
class Outcome:
    results: Sequence[SearchResult]


@dataclass(frozen=True, slots=True)
class Status:
    vector_index: None


class ScriptedManager:
    """Answers every query with the same ranked hits; records how it was opened and used."""

    opened: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        ScriptedManager.opened.append(kwargs)

    def sync(self, *, force: bool = False, wait_for_vectors: bool = True) -> object:
        return None

    asked: ClassVar[list[str | None]] = []

    def search(
        self,
        query: str,
        *,
        max_results: int | None = None,
        min_score: float | None = None,
        as_of: str | None = None,
    ) -> Outcome:
        ScriptedManager.asked.append(as_of)
        hits = [("sessions/s2.jsonl", 1, 2), ("sessions/s1.jsonl", 3, 3)]
        return Outcome(
            [
                SearchResult(
                    path=p, start_line=a, end_line=b, score=1.0, snippet="", source="sessions"
                )
                for p, a, b in hits
            ]
        )

    def status(self) -> Status:
        return Status(vector_index=None)

    def close(self) -> None:
        return None


def _unit() -> Unit:
    files = tuple(
        DocFile(
            "session",
            f"{n}.jsonl",
            n,
            '{"type":"message","message":{"role":"user","content":"x"}}\n',
        )
        for n in ("s1", "s2")
    )
    query = Query(
        qid="q1",
        text="where",
        gold_docs={"s1": 1},
        gold_lines=frozenset({("sessions/s1.jsonl", 3)}),
        category="1",
        as_of="2024-01-02T00:05:00Z",
    )
    return Unit("u1", files, (query,))


class TestRunUnit:
    def test_scores_every_mode_and_separates_the_keyword_store(self, tmp_path: Path) -> None:
        ScriptedManager.opened = []
        unit = _unit()
        dataset = Dataset("mini", units=lambda: iter([unit]), turn_level=True)
        run = DatasetRun("mini", turn_level=True)
        options = RunOptions(work_dir=tmp_path, modes=("keyword", "hybrid", "rrf"))
        run_unit(dataset, unit, options, ScriptedManager, run, lambda _: None)

        stores = [o["config"]["store"]["path"] for o in ScriptedManager.opened]
        assert stores[1] == stores[2] != stores[0]
        assert ScriptedManager.opened[0]["config"]["provider"] == "none"
        assert ScriptedManager.opened[2]["config"]["query"]["hybrid"]["fusion"] == "rrf"
        # The harness searches with the product's minScore, so the guard measures what ships.
        assert "minScore" not in ScriptedManager.opened[1]["config"]["query"]
        assert (
            tmp_path / "mini" / "u1" / "state" / "agents" / "bench" / "sessions" / "s1.jsonl"
        ).exists()

        got = run.records[1]["metrics"]
        assert got["recall_any@1"] == 0.0
        assert got["recall_any@5"] == 1.0
        assert got["mrr@10"] == 0.5
        assert got["turn_recall@L2"] == 0.0  # the first hit uses the whole budget
        assert got["turn_recall@L5"] == 1.0
        assert got["lines_per_hit@5"] == 1.5

    def test_each_question_is_asked_at_its_as_of(self, tmp_path: Path) -> None:
        ScriptedManager.asked = []
        unit = _unit()
        dataset = Dataset("mini", units=lambda: iter([unit]), turn_level=True)
        options = RunOptions(work_dir=tmp_path, modes=("keyword",))

        run = DatasetRun("mini", turn_level=True)
        run_unit(dataset, unit, options, ScriptedManager, run, lambda _: None)

        assert ScriptedManager.asked == ["2024-01-02T00:05:00Z"]

    def test_report_macro_averages_and_writes_json(self, tmp_path: Path) -> None:
        unit = _unit()
        dataset = Dataset("mini", units=lambda: iter([unit]), turn_level=True)
        run = DatasetRun("mini", turn_level=True)
        run_unit(
            dataset,
            unit,
            RunOptions(work_dir=tmp_path, modes=("hybrid",)),
            ScriptedManager,
            run,
            lambda _: None,
        )
        doc = report.write_json(tmp_path / "r.json", {"stamp": "x"}, [run])
        summary = doc["datasets"]["mini"]["summary"]["hybrid"]["all"]
        assert summary["recall_any@5"] == 1.0
        assert summary["n"] == 1.0
        assert json.loads((tmp_path / "r.json").read_text())["meta"] == {"stamp": "x"}
        _, (back,) = report.read_runs(tmp_path / "r.json")
        assert back.records == run.records
        assert back.units == run.units
        assert "### mini: overall" in report.render(run, doc["datasets"]["mini"]["summary"], [])


class TestSelection:
    def test_query_limit_is_a_reproducible_hash_sample(self) -> None:
        queries = [Query(qid=str(i), text="t", gold_docs={"d": 1}) for i in range(20)]
        smallest = sorted(queries, key=lambda q: hashlib.sha256(q.qid.encode()).hexdigest())[:5]
        picked = select_queries(queries, 5)
        assert {q.qid for q in picked} == {q.qid for q in smallest}
        assert [q.qid for q in picked] == sorted((q.qid for q in picked), key=int)
        assert select_queries(queries, None) == tuple(queries)

    def test_unit_limit_round_robins_question_types(self) -> None:
        units = [
            Unit(f"{c}{i}", (), (Query(qid=f"{c}{i}", text="t", gold_docs={}, category=c),))
            for c in "ab"
            for i in range(3)
        ]
        assert [u.unit_id for u in select_units(iter(units), 3)] == ["a0", "b0", "a1"]


class TestConfig:
    def test_deep_merge_merges_nested_keys(self) -> None:
        assert deep_merge({"a": {"b": 1, "c": 2}}, {"a": {"c": 3}}) == {"a": {"b": 1, "c": 3}}

    def test_extra_config_reaches_every_mode(self, tmp_path: Path) -> None:
        cfg = mode_config(
            "vector", "local", tmp_path / "s.sqlite", 50, {"chunking": {"tokens": 200}}
        )
        assert cfg["chunking"] == {"tokens": 200}
        assert cfg["query"] == {"maxResults": 50, "hybrid": {"enabled": False}}

    def test_unknown_mode_is_a_key_error(self, tmp_path: Path) -> None:
        with pytest.raises(KeyError):
            mode_config("nope", "local", tmp_path, 50, {})


class TestTables:
    def test_tables_are_markdown_with_aligned_columns(self) -> None:
        text = report.format_table(
            "t", ["mode", "ndcg@10"], [["hybrid", "0.900"], ["rrf", "1.000"]]
        )
        assert text.splitlines() == [
            "",
            "### t",
            "| mode   | ndcg@10 |",
            "|--------|---------|",
            "| hybrid | 0.900   |",
            "| rrf    | 1.000   |",
        ]


class TestCompareRuns:
    @staticmethod
    def run_of(ndcgs: Sequence[float], mode: str = "hybrid") -> DatasetRun:
        run = DatasetRun("mini", turn_level=False)
        run.records = [
            {"unit": "u", "qid": str(i), "mode": mode, "metrics": {"ndcg@10": v, "recall@5": 1.0}}
            for i, v in enumerate(ndcgs)
        ]
        return run

    def test_pairs_the_same_queries_of_one_mode_across_two_runs(self) -> None:
        after = self.run_of([1.0, 1.0, 0.5, 1.0])
        before = self.run_of([0.5, 1.0, 0.5, 0.5])
        before.records.append(  # a query only one run scored is left out of the pairing
            {"unit": "u", "qid": "extra", "mode": "hybrid", "metrics": {"ndcg@10": 0.0}}
        )

        by_metric = {c["metric"]: c for c in report.compare_runs(after, before, "hybrid")}

        assert by_metric["ndcg@10"]["n"] == 4
        assert by_metric["ndcg@10"]["a_mean"] == 0.875
        assert by_metric["ndcg@10"]["b_mean"] == 0.625
        assert by_metric["ndcg@10"]["mean_diff"] == pytest.approx(0.25)
        assert by_metric["recall@5"]["mean_diff"] == 0.0
        assert by_metric["recall@5"]["p_value"] == 1.0
        assert by_metric["ndcg@10"]["changed"] == 2  # queries 0 and 3 moved
        assert by_metric["recall@5"]["changed"] == 0

    def test_other_modes_are_not_compared(self) -> None:
        a, b = self.run_of([1.0, 0.0], mode="rrf"), self.run_of([0.0, 1.0], mode="rrf")

        assert report.compare_runs(a, b, "hybrid") == []


class TestRankingChanges:
    @staticmethod
    def run_of(digests: Sequence[tuple[str, str]]) -> DatasetRun:
        run = DatasetRun("mini", turn_level=False)
        run.records = [
            {
                "unit": "u",
                "qid": str(i),
                "mode": "keyword",
                "metrics": {"ndcg@10": 1.0, "mrr@10": 0.5},
                "ranking": {"top10": top, "all": whole},
            }
            for i, (top, whole) in enumerate(digests)
        ]
        return run

    def test_counts_queries_whose_top_10_or_whole_list_differ(self) -> None:
        a = self.run_of([("t", "w"), ("t", "w"), ("t", "w")])
        b = self.run_of([("t", "w"), ("t", "other"), ("other", "other")])

        assert report.ranking_changes(a, b, "keyword") == {"n": 3, "top10": 1, "all": 2}
        assert report.ranking_changes(a, a, "keyword") == {"n": 3, "top10": 0, "all": 0}

    def test_runs_without_digests_give_none(self) -> None:
        a = self.run_of([("t", "w")])
        b = self.run_of([("t", "w")])
        del b.records[0]["ranking"]

        assert report.ranking_changes(a, b, "keyword") is None

    def test_all_metrics_are_compared_on_request(self) -> None:
        a = self.run_of([("t", "w"), ("t", "w")])

        names = [c["metric"] for c in report.compare_runs(a, a, "keyword", metric_names=["all"])]

        assert names == ["mrr@10", "ndcg@10"]

    def test_ranking_digests_tell_orders_apart(self) -> None:
        from memlane.bench.runner import ranking_digests

        one = ranking_digests([("a.md", 1, 2), ("b.md", 1, 2)])
        swapped = ranking_digests([("b.md", 1, 2), ("a.md", 1, 2)])

        assert one != swapped
        assert one == ranking_digests([("a.md", 1, 2), ("b.md", 1, 2)])
        assert ranking_digests([("a.md", 1, 2)])["top10"] != one["top10"]
