"""The harness's store driver: the same unit run on SQLite and on PostgreSQL ranks alike.

Real memlane (`memlane.open`, the bundled model for the hybrid mode), a real SQLite file and a
real PostgreSQL server from the `pg_url` fixture; a tiny two-language data set.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from memlane.application.ports.index_transfer import TransferCounts, TransferTargetNotEmpty
from memlane.bench import report
from memlane.bench.cli import _redacted, main
from memlane.bench.datasets.model import Dataset
from memlane.bench.runner import DatasetRun, RunOptions, memlane_opener, run_unit
from memlane.bench.store_driver import (
    PostgresDriver,
    SqliteDriver,
    StoreDriver,
    copy_sqlite_store,
    database_name,
)
from memlane.bench.workspace import AGENT_ID, UnitPaths
from tests.bench.mini_dataset import NOTES, QUERIES, mini_dataset


def _dataset() -> Dataset:
    # A name of its own: a MEMLANE_TEST_PG_URL server keeps databases between runs.
    return mini_dataset(f"mini{uuid.uuid4().hex[:8]}")


def _run(dataset: Dataset, work_dir: Path, driver: StoreDriver) -> DatasetRun:
    (unit,) = list(dataset.units())
    run = DatasetRun(dataset.name, turn_level=False)
    options = RunOptions(
        work_dir=work_dir, modes=("keyword", "hybrid"), max_results=10, driver=driver
    )
    run_unit(dataset, unit, options, memlane_opener(), run, lambda _: None)
    return run


def _rankings(run: DatasetRun) -> dict[tuple[str, str], dict[str, str]]:
    return {(r["mode"], r["qid"]): r["ranking"] for r in run.records}


def _pg_counts(url: str) -> TransferCounts:
    from memlane.adapters.postgres.database import PostgresDatabase
    from memlane.adapters.postgres.transfer import PostgresIndexTransfer

    db = PostgresDatabase.open(url)
    try:
        return PostgresIndexTransfer(db, AGENT_ID).counts()
    finally:
        db.close()


def _sqlite_counts(path: Path) -> TransferCounts:
    from memlane.adapters.store.transfer import SqliteIndexTransfer

    reader = SqliteIndexTransfer.open(path)
    try:
        return reader.counts()
    finally:
        reader.close()


@pytest.mark.integration
@pytest.mark.postgres
class TestPostgresDriver:
    def test_a_copied_sqlite_store_ranks_every_query_as_sqlite_did(
        self, tmp_path: Path, pg_url: str
    ) -> None:
        dataset = _dataset()
        on_sqlite = _run(dataset, tmp_path, SqliteDriver())
        logged: list[str] = []
        driver = PostgresDriver(pg_url, log=logged.append)

        on_postgres = _run(dataset, tmp_path, driver)

        assert len(on_sqlite.records) == len(QUERIES) * 2
        assert all(r["n_hits"] > 0 for r in on_sqlite.records)
        assert _rankings(on_postgres) == _rankings(on_sqlite)
        assert [c["changed"] for c in report.compare_runs(on_postgres, on_sqlite, "hybrid")] == [
            0,
            0,
        ]
        # Both stores were filled by copying the SQLite files (the hybrid one with its vectors),
        # and the searches read PostgreSQL: its databases hold what the files hold.
        assert sum("copied" in line for line in logged) == 2
        paths = UnitPaths.for_unit(tmp_path, dataset.name, "u1")
        for key in ("fts", "local"):
            url = driver.store_config(paths, key)["url"]
            assert _pg_counts(url) == _sqlite_counts(paths.store_path(key))
        assert _pg_counts(driver.store_config(paths, "local")["url"]).vectors == len(NOTES)

    def test_without_a_sqlite_store_the_first_sync_indexes_into_postgres(
        self, tmp_path: Path, pg_url: str
    ) -> None:
        dataset = _dataset()
        on_sqlite = _run(dataset, tmp_path / "sqlite", SqliteDriver())
        logged: list[str] = []

        driver = PostgresDriver(pg_url, from_sqlite=False, log=logged.append)

        on_postgres = _run(dataset, tmp_path / "pg", driver)

        assert _rankings(on_postgres) == _rankings(on_sqlite)
        assert sum("indexed by the first sync" in line for line in logged) == 2
        paths = UnitPaths.for_unit(tmp_path / "pg", dataset.name, "u1")
        assert not (paths.state_dir / "memory").exists()  # no SQLite file was written
        for key in ("fts", "local"):
            assert _pg_counts(driver.store_config(paths, key)["url"]).chunks == len(NOTES)

    def test_copying_into_a_database_that_holds_the_agent_is_refused(
        self, tmp_path: Path, pg_url: str
    ) -> None:
        dataset = _dataset()
        _run(dataset, tmp_path, SqliteDriver())
        driver = PostgresDriver(pg_url, log=lambda _: None)
        paths = UnitPaths.for_unit(tmp_path, dataset.name, "u1")
        url = driver.store_config(paths, "fts")["url"]

        with pytest.raises(TransferTargetNotEmpty):
            copy_sqlite_store(paths.store_path("fts"), url)


class TestNamesAndArguments:
    def test_database_names_are_valid_stable_and_distinct(self, tmp_path: Path) -> None:
        long_unit = tmp_path / "locomo" / ("conv-" + "x" * 80)
        name = database_name(long_unit, "local")

        assert len(name) <= 63
        assert name == database_name(long_unit, "local")
        assert name != database_name(long_unit, "fts")
        assert database_name(tmp_path / "xquad_zh" / "xquad_zh", "fts") == (
            "memlane_bench_xquad_zh_xquad_zh_fts"
        )
        assert database_name(tmp_path / "Beir" / "a.b-c", "local") == (
            "memlane_bench_beir_a_b_c_local"
        )

    def test_pg_url_without_the_postgres_driver_is_a_usage_error(self) -> None:
        with pytest.raises(SystemExit, match="--pg-url needs --driver postgres"):
            main(["run", "xquad_zh", "--pg-url", "postgresql+psycopg://u@h/db"])

    def test_the_recorded_command_hides_the_password(self) -> None:
        argv = ["run", "x", "--pg-url", "postgresql+psycopg://u:secret@h/db"]

        assert "secret" not in " ".join(_redacted(argv))
        assert "secret" not in " ".join(_redacted(["--pg-url=postgresql://u:secret@h/db"]))
        assert _redacted(["run", "x"]) == ["run", "x"]
