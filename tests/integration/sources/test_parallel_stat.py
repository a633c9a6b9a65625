"""Integration: scans big enough to stat on threads list exactly what a one-thread scan does."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memlane.adapters.sources import _stat_pool
from memlane.adapters.sources._stat_pool import stat_all
from memlane.adapters.sources.filesystem import FilesystemMemorySource
from memlane.adapters.sources.jsonl_sessions import JsonlSessionSource
from memlane.domain.sources import FileStat

pytestmark = pytest.mark.integration


def _expected(root: Path, rels: list[str], source: str = "memory") -> list[FileStat]:
    stats = [(rel, os.stat(root / rel)) for rel in rels]
    return sorted(
        (FileStat(source, rel, st.st_mtime, st.st_size) for rel, st in stats),  # type: ignore[arg-type]
        key=lambda f: f.path,
    )


def test_stat_all_keeps_the_order_and_returns_each_error(tmp_path: Path) -> None:
    paths = []
    for i in range(40):
        path = tmp_path / f"f{i}"
        if i % 7 != 3:  # every seventh is missing
            path.write_text("x" * i)
        paths.append(str(path))

    results = stat_all(paths, follow_symlinks=False)

    for i, result in enumerate(results):
        if i % 7 == 3:
            assert isinstance(result, FileNotFoundError)
        else:
            assert isinstance(result, os.stat_result) and result.st_size == i


def test_a_large_memory_folder_is_listed_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_stat_pool, "PARALLEL_FROM", 4)  # threads from 4 notes: every path
    ws = tmp_path / "ws"
    rels = ["MEMORY.md"]
    for folder in range(6):
        for i in range(9):
            rels.append(f"memory/f{folder}/n{i}.md")
    for rel in rels:
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(rel * 3)
    (ws / "memory" / "f0" / "skip.txt").write_text("not a note")
    # a second route to a note: listed once, under the path found first
    (ws / "memory" / "f5" / "link.md").symlink_to(ws / "memory" / "f0" / "n0.md")

    scan = FilesystemMemorySource(workspace=str(ws)).scan()

    assert scan.files == _expected(ws, rels)
    assert scan.issues == []


def test_a_large_sessions_folder_is_listed_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_stat_pool, "PARALLEL_FROM", 4)
    folder = tmp_path / "sessions"
    folder.mkdir()
    names = [f"s{i:02}.jsonl" for i in range(30)]
    for name in names:
        (folder / name).write_text("{}\n" * len(name))
    (folder / "notes.txt").write_text("ignored")

    scan = JsonlSessionSource(sessions_dir=str(folder)).scan()

    expected = _expected(folder, names, "sessions")
    assert scan.files == [
        FileStat("sessions", f"sessions/{f.path}", f.mtime, f.size) for f in expected
    ]
