"""`bench guard`: keyword runs everywhere, vector modes only where every vector is cached
(else "not measured"), paired comparisons per category with the budget verdict.

Real memlane on real SQLite files with the bundled model; the four-note data set.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from memlane.bench import guard, guard_cli
from memlane.bench.embed_cache import SharedCache
from memlane.bench.runner import DatasetRun, RunOptions, memlane_opener, run_unit
from tests.bench.mini_dataset import QUERIES, mini_dataset


def _options(work_dir: Path) -> RunOptions:
    return RunOptions(
        work_dir=work_dir, max_results=10, shared_cache=SharedCache.in_work_dir(work_dir)
    )


def _guard(
    work_dir: Path,
    *,
    embed_missing: bool = False,
    log: Callable[[str], None] = lambda _: None,
) -> guard.GuardRun:
    return guard.run_sets(
        ["mini"],
        _options(work_dir),
        memlane_opener(),
        data_root=work_dir,
        load=mini_dataset,
        log=log,
        embed_missing=embed_missing,
    )


def test_vector_modes_without_cached_vectors_are_reported_not_measured(tmp_path: Path) -> None:
    result = _guard(tmp_path)
    assert set(result.not_measured) == {"mini/vector", "mini/hybrid"}
    assert "0 of 4 texts" in result.not_measured["mini/hybrid"]
    (run,) = result.default
    assert {r["mode"] for r in run.records} == {"keyword"}
    assert len(run.records) == len(QUERIES)
    assert result.rules_off == []


def test_with_every_vector_cached_both_variants_run(tmp_path: Path) -> None:
    dataset = mini_dataset()
    (unit,) = list(dataset.units())
    warm = DatasetRun("mini", turn_level=False)
    options = _options(tmp_path)
    run_unit(dataset, unit, replace(options, modes=("vector",)), memlane_opener(), warm, print)
    result = _guard(tmp_path)
    assert result.not_measured == {}
    (run,) = result.default
    assert {r["mode"] for r in run.records} == {"keyword", "vector", "hybrid"}
    (off,) = result.rules_off
    assert {r["mode"] for r in off.records} == {"vector", "hybrid"}
    moved = guard.compare(run, off, "hybrid", resamples=200)
    assert {m.metric for m in moved} == set(guard.PRIMARY_DOC)
    assert all(m.n == len(QUERIES) for m in moved)


def test_embed_missing_measures_every_mode_and_leaves_the_vectors_cached(tmp_path: Path) -> None:
    logged: list[str] = []
    result = _guard(tmp_path, embed_missing=True, log=logged.append)
    assert result.not_measured == {}
    assert "mini: embedding 4 of 4 texts first" in logged
    (run,) = result.default
    assert {r["mode"] for r in run.records} == {"keyword", "vector", "hybrid"}
    # The next run finds every vector in the shared cache: nothing left to embed.
    again = _guard(tmp_path)
    assert again.not_measured == {}


def test_exit_status_tells_an_incomplete_guard_from_a_passing_one() -> None:
    assert guard_cli.exit_status(0, {}) == 0
    assert guard_cli.exit_status(0, {"mini/vector": "not measured: 0 of 4 texts"}) == 3
    assert guard_cli.exit_status(2, {"mini/vector": "not measured: 0 of 4 texts"}) == 1


def _run(values: dict[str, tuple[str, float]]) -> DatasetRun:
    run = DatasetRun("set", turn_level=False)
    for qid, (category, value) in values.items():
        scores = dict.fromkeys(guard.PRIMARY_DOC, value)
        run.records.append(
            {"unit": "u", "qid": qid, "category": category, "mode": "hybrid", "metrics": scores}
        )
    return run


def test_compare_judges_each_category_with_enough_queries() -> None:
    # Category "a": 10 queries, 4 of them lost; "b": 3 queries (too few to judge alone).
    a_vals = {f"a{i}": ("a", 0.0 if i < 4 else 1.0) for i in range(10)}
    a_vals |= {f"b{i}": ("b", 1.0) for i in range(3)}
    b_vals = {q: (c, 1.0) for q, (c, _) in a_vals.items()}
    moved = guard.compare(_run(a_vals), _run(b_vals), "hybrid", resamples=2000)
    by_group = {(m.group, m.metric): m for m in moved}
    assert {g for g, _ in by_group} == {"all", "a"}
    lost = by_group[("a", "ndcg@10")]
    assert (lost.n, round(lost.diff, 3)) == (10, -0.4)
    assert lost.significant and not lost.within_budget
    rows = guard.rows(moved)
    assert any("OVER the 0.005 budget" in r[-1] for r in rows)
    same = guard.compare(_run(b_vals), _run(b_vals), "hybrid", resamples=200)
    assert all(m.within_budget and not m.significant for m in same)
    # A category where no query moved is left out of the table; "all" always stays.
    assert {r[2] for r in guard.rows(same)} == {"all"}
    assert {r[2] for r in guard.rows(same, only_moved=False)} == {"all", "a"}


def test_write_baselines_points_measured_modes_at_the_run(tmp_path: Path) -> None:
    path = tmp_path / "guard.json"
    path.write_text(json.dumps({"note": "kept", "sets": {"other": {"keyword": "r/x.json"}}}))
    run = _run({"q": ("a", 1.0)})
    written = guard.write_baselines(
        path, guard.read_baselines(path), "results/new.json", guard.GuardRun([run], [], {})
    )
    assert written == {"other": {"keyword": "r/x.json"}, "set": {"hybrid": "results/new.json"}}
    assert guard.read_baselines(path) == written
    assert json.loads(path.read_text())["note"] == "kept"


def test_every_committed_baseline_file_exists_with_its_records() -> None:
    from memlane.bench import report

    bench = guard.BASELINES.parent.parent
    files = {f for modes in guard.read_baselines().values() for f in modes.values()}
    assert files
    missing = [f for f in files if not (bench / f).is_file()]
    missing += [f for f in files if not report.records_path(bench / f).is_file()]
    assert missing == []


def test_marking_rows_count_false_alarms_on_answered_questions_apart_from_misses() -> None:
    def rec(mode: str, found: float, marked: bool | None) -> dict[str, object]:
        return {"mode": mode, "no_strong_match": marked, "metrics": {"recall_any@5": found}}

    run = DatasetRun(name="mini", turn_level=False)
    run.records = [
        rec("keyword", 1.0, None),  # keyword-only search is not judged: no row
        rec("hybrid", 1.0, False),
        rec("hybrid", 1.0, True),  # a false alarm
        rec("hybrid", 1.0, False),
        rec("hybrid", 1.0, False),
        rec("hybrid", 0.0, True),  # a missed answer, marked: a true warning
        rec("hybrid", 1.0, None),
    ]

    assert guard.marking_rows(run) == [["mini", "hybrid", "1 of 4 (25.0%)", "1 of 1 (100.0%)", "1"]]
