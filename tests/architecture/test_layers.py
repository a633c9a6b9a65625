"""The dependency rule holds, and import-linter really catches a violation."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memlane.domain import events

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
PACKAGE_PARTS = ["__init__.py", "domain", "application", "adapters", "entrypoints"]


def _copy_package(target: Path) -> Path:
    package = target / "memlane"
    package.mkdir()
    for part in PACKAGE_PARTS:
        source = ROOT / part
        if source.is_dir():
            shutil.copytree(source, package / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, package / part)
    shutil.copy(ROOT / "pyproject.toml", target / "pyproject.toml")
    return package


def _lint(cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", "pyproject.toml", "--no-cache"],
        cwd=cwd,
        env={"PYTHONPATH": str(cwd), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


class TestImportContracts:
    def test_the_real_tree_keeps_every_contract(self, tmp_path: Path) -> None:
        _copy_package(tmp_path)

        result = _lint(tmp_path)

        assert result.returncode == 0, result.stdout + result.stderr

    @pytest.mark.parametrize(
        ("module", "line"),
        [
            ("domain/_violation.py", "import memlane.adapters.clock\n"),
            ("domain/_violation.py", "import sqlalchemy\n"),
            ("application/_violation.py", "import memlane.entrypoints.cli\n"),
            ("application/_violation.py", "import httpx\n"),
        ],
    )
    def test_a_forbidden_import_fails_the_check(
        self, tmp_path: Path, module: str, line: str
    ) -> None:
        package = _copy_package(tmp_path)
        (package / module).write_text(line)

        result = _lint(tmp_path)

        assert result.returncode != 0
        assert "BROKEN" in result.stdout or "broken" in result.stdout.lower()


class TestEventRegistry:
    def test_every_event_class_has_a_stable_type_name(self) -> None:
        subclasses = {
            cls
            for cls in vars(events).values()
            if isinstance(cls, type) and issubclass(cls, events.Event) and cls is not events.Event
        }

        assert subclasses == set(events.EVENT_TYPES.values())

    def test_every_event_round_trips_through_its_record(self) -> None:
        from tests.fakes.clock import T0

        samples = [
            events.FileChanged(
                occurred_at=T0, source="memory", path="MEMORY.md", mtime=1.5, size=3
            ),
            events.FileDeleted(occurred_at=T0, source="sessions", path="sessions/a.jsonl"),
            events.SessionGrew(
                occurred_at=T0, path="sessions/a.jsonl", from_size=1, to_size=9, new_messages=2
            ),
            events.ReindexRequired(occurred_at=T0, reason="user_requested", detail="cli"),
            events.FileIndexed(
                occurred_at=T0,
                source="memory",
                path="a.md",
                chunks=2,
                embedded=1,
                cached=1,
                duration_ms=3.5,
            ),
            events.FileRemoved(occurred_at=T0, source="memory", path="a.md"),
            events.IndexRebuilt(
                occurred_at=T0, reason="no_index", files=1, chunks=2, duration_ms=1.0
            ),
            events.ProviderFellBack(
                occurred_at=T0, from_provider="openai", to_provider="local", reason="429"
            ),
            events.SyncFailed(occurred_at=T0, trigger="watch", reasons="a.md: disk full"),
            events.SyncRecovered(occurred_at=T0, trigger="search"),
        ]
        assert {type(s) for s in samples} == set(events.EVENT_TYPES.values())

        for sample in samples:
            again = events.event_from_record(
                events.type_name(sample), events.event_to_record(sample)
            )
            assert again == sample
