"""`bench run --force-vector-codes`: the harness's small stores answered by the code-file engine.

Real memlane (`memlane.open`, the bundled model for the hybrid mode) on a real SQLite file; a
tiny data set, far below the store's 20,000-vector threshold for a code file.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from memlane.adapters.store import code_file_place
from memlane.adapters.store.code_file_place import code_path
from memlane.bench import runner
from memlane.bench.cli import main
from memlane.bench.datasets.model import Dataset
from memlane.bench.runner import DatasetRun, RunOptions, memlane_opener, run_unit
from memlane.bench.vector_engine import EngineNotForced, forced_code_engine
from memlane.bench.workspace import UnitPaths
from tests.bench.mini_dataset import NOTES, mini_dataset


def _dataset() -> Dataset:
    return mini_dataset()


def _run(work_dir: Path, *, forced: bool) -> DatasetRun:
    dataset = _dataset()
    (unit,) = list(dataset.units())
    run = DatasetRun(dataset.name, turn_level=False)
    options = RunOptions(
        work_dir=work_dir, modes=("hybrid",), max_results=10, force_vector_codes=forced
    )
    run_unit(dataset, unit, options, memlane_opener(), run, lambda _: None)
    return run


def _store(work_dir: Path) -> Path:
    return UnitPaths.for_unit(work_dir, "mini", "u1").store_path("local")


@pytest.mark.integration
class TestForcedCodeEngine:
    def test_a_forced_run_answers_from_a_code_file_and_ranks_as_the_exact_one(
        self, tmp_path: Path
    ) -> None:
        exact = _run(tmp_path / "exact", forced=False)
        forced = _run(tmp_path / "codes", forced=True)

        assert exact.units[0].vector_engine["hybrid"] == (
            f"codes: no file, exact: {len(NOTES)} vectors, below {code_file_place.MIN_ROWS}"
        )
        assert forced.units[0].vector_engine["hybrid"].startswith(f"codes: {len(NOTES)} vectors")
        assert not code_path(_store(tmp_path / "exact")).exists()
        assert code_path(_store(tmp_path / "codes")).exists()
        # Every row of so small a store is re-scored exactly: the same rankings, query by query.
        assert all(r["n_hits"] > 0 for r in exact.records)
        assert [r["ranking"] for r in forced.records] == [r["ranking"] for r in exact.records]
        assert code_file_place.MIN_ROWS == 20_000  # the process-wide threshold is restored

    def test_a_forced_run_answered_without_a_code_file_stops(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        @contextmanager
        def not_applied(forced: bool) -> Iterator[None]:
            yield

        monkeypatch.setattr(runner, "forced_code_engine", not_applied)

        with pytest.raises(
            EngineNotForced, match=r"mini/u1 hybrid: .* \(codes: no file, exact: 4 vectors"
        ):
            _run(tmp_path, forced=True)


class TestForcedCodeEngineSwitch:
    def test_the_threshold_is_restored_after_the_block_even_on_error(self) -> None:
        before = code_file_place.MIN_ROWS
        seen: list[int] = []

        def fail_inside() -> None:
            with forced_code_engine(True):
                seen.append(code_file_place.MIN_ROWS)
                raise RuntimeError("boom")

        with pytest.raises(RuntimeError, match="boom"):
            fail_inside()
        with forced_code_engine(False):
            seen.append(code_file_place.MIN_ROWS)
        seen.append(code_file_place.MIN_ROWS)
        assert seen == [0, before, before]

    def test_forcing_on_postgres_is_a_usage_error(self) -> None:
        with pytest.raises(SystemExit, match="needs --driver sqlite"):
            main(["run", "xquad_zh", "--driver", "postgres", "--force-vector-codes"])
