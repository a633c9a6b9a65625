"""The harness's shared embedding cache: a second set with the same texts embeds nothing.

Real memlane (`memlane.open`, the bundled model for the vector modes) on real SQLite files; the
four-note data set run under two names, i.e. two units with two stores of their own.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memlane.bench.cache_cli import count
from memlane.bench.cli import main
from memlane.bench.embed_cache import CACHE_FILE, CacheFileError, SharedCache, chunk_hashes
from memlane.bench.runner import DatasetRun, RunOptions, memlane_opener, run_unit
from memlane.bench.workspace import UnitPaths
from memlane.domain.note_pieces import note_pieces
from tests.bench.mini_dataset import NOTES, mini_dataset


def _run(name: str, work_dir: Path, shared: SharedCache | None) -> DatasetRun:
    dataset = mini_dataset(name)
    (unit,) = list(dataset.units())
    run = DatasetRun(name, turn_level=False)
    options = RunOptions(
        work_dir=work_dir, modes=("vector", "hybrid"), max_results=10, shared_cache=shared
    )
    run_unit(dataset, unit, options, memlane_opener(), run, lambda _: None)
    return run


def _rankings(run: DatasetRun) -> dict[tuple[str, str], str]:
    return {(r["mode"], r["qid"]): r["ranking"]["all"] for r in run.records}


def _held() -> int:
    """Vectors a unit of NOTES leaves: one per note (one chunk each) and one per piece of it
    (domain/note_pieces.py: a note chunk is embedded line by line too)."""
    return len(NOTES) + len({p for text in NOTES.values() for p in note_pieces(text.strip())})


def test_a_second_unit_with_the_same_texts_embeds_nothing(tmp_path: Path) -> None:
    shared = SharedCache.in_work_dir(tmp_path)
    first = _run("mini_a", tmp_path, shared)
    (unit_a,) = first.units
    assert unit_a.cache_seeded == {"local": 0}
    assert unit_a.embedded == {"local": len(NOTES)}  # one chunk per note, once for both modes
    assert shared.size() == _held()

    second = _run("mini_b", tmp_path, shared)
    (unit_b,) = second.units
    assert unit_b.cache_seeded == {"local": _held()}  # chunks and pieces
    assert unit_b.embedded == {"local": 0}
    assert shared.size() == _held()
    # The seeded vectors are the ones the model gave: the rankings are the same.
    assert _rankings(second) == _rankings(first)


def test_without_the_shared_cache_each_unit_embeds_its_texts(tmp_path: Path) -> None:
    _run("mini_a", tmp_path, None)
    run = _run("mini_b", tmp_path, None)
    assert run.units[0].embedded == {}  # not counted: the store's own cache did the work
    assert not (tmp_path / CACHE_FILE).exists()
    store = UnitPaths.for_unit(tmp_path, "mini_b", "u1").store_path("local")
    with sqlite3.connect(store) as conn:
        assert conn.execute("SELECT count(*) FROM embedding_cache").fetchone()[0] == _held()


def test_export_then_import_into_an_empty_cache(tmp_path: Path) -> None:
    shared = SharedCache.in_work_dir(tmp_path / "a")
    _run("mini_a", tmp_path / "a", shared)
    exported = tmp_path / "cache-export.sqlite"
    assert main(["cache", "export", str(exported), "--work-dir", str(tmp_path / "a")]) == 0
    with pytest.raises(FileExistsError):
        shared.export(exported)  # never overwrites

    other = SharedCache.in_work_dir(tmp_path / "b")
    assert main(["cache", "import", str(exported), "--work-dir", str(tmp_path / "b")]) == 0
    assert other.size() == _held()
    assert other.import_file(exported) == 0  # entries already held are kept
    # The imported vectors serve a fresh unit: nothing is embedded.
    run = _run("mini_c", tmp_path / "b", other)
    assert run.units[0].embedded == {"local": 0}


def test_importing_something_else_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    shared = SharedCache.in_work_dir(tmp_path)
    junk = tmp_path / "notes.txt"
    junk.write_text("not a database\n" * 100, encoding="utf-8")
    with pytest.raises(CacheFileError):
        shared.import_file(junk)
    with pytest.raises(CacheFileError):
        shared.import_file(tmp_path / "missing.sqlite")
    assert main(["cache", "import", str(junk), "--work-dir", str(tmp_path)]) == 1
    assert shared.size() == 0


def test_count_sees_the_texts_the_vector_store_embeds(tmp_path: Path) -> None:
    """`cache count` chunks keyword-only; its hashes are the vector store's chunk hashes."""
    shared = SharedCache.in_work_dir(tmp_path)
    _run("mini_a", tmp_path, shared)
    vector_store = UnitPaths.for_unit(tmp_path, "mini_a", "u1").store_path("local")
    keyword_hashes = _keyword_hashes(tmp_path)
    assert keyword_hashes == chunk_hashes(vector_store)


def _keyword_hashes(work_dir: Path) -> set[str]:
    from memlane.bench.runner import mode_config, open_unit
    from memlane.bench.workspace import materialize

    (unit,) = list(mini_dataset("mini_k").units())
    paths = UnitPaths.for_unit(work_dir, "mini_k", unit.unit_id)
    materialize(unit, paths)
    store = paths.store_path("fts")
    manager = open_unit(memlane_opener(), paths, mode_config("keyword", "none", store, 10, {}))
    try:
        manager.sync(force=False)
    finally:
        manager.close()
    return chunk_hashes(store)


def test_count_over_units_that_share_texts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memlane.bench.datasets import registry

    monkeypatch.setattr(registry, "load", lambda name, path, root: mini_dataset(name))
    monkeypatch.setattr(registry, "SPECS", {"mini_a": None, "mini_b": None})
    shared = SharedCache.in_work_dir(tmp_path)
    counts, overall = count(["mini_a", "mini_b"], tmp_path, tmp_path, shared)
    assert [(c.per_unit_texts, c.distinct_texts, c.cached) for c in counts] == [(4, 4, 0)] * 2
    assert (overall.per_unit_texts, overall.distinct_texts) == (8, 4)
