"""Unit tests: the public surface of `import memlane` (names, typing, version, import cost)."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path
from typing import Any

import pytest

import memlane
from memlane.application import reports
from memlane.application.ports import embedding, event_log, file_source, index_store
from memlane.domain import errors
from memlane.entrypoints.api import open_manager

PACKAGE_DIR = Path(memlane.__file__).parent


def _python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout.strip()


class TestNames:
    def test_every_name_in_all_is_importable(self) -> None:
        assert len(set(memlane.__all__)) == len(memlane.__all__)
        for name in memlane.__all__:
            assert getattr(memlane, name) is not None, name

    def test_star_import_gives_exactly_all(self) -> None:
        namespace: dict[str, object] = {}
        exec("from memlane import *", namespace)
        assert set(namespace) - {"__builtins__"} == set(memlane.__all__)

    def test_exports_are_the_internal_objects_not_copies(self) -> None:
        # `except memlane.StoreError` must catch what the store raises.
        assert memlane.StoreError is index_store.StoreError
        assert memlane.EmbeddingTimeout is embedding.EmbeddingTimeout
        assert memlane.FileMissing is file_source.FileMissing
        assert memlane.EventLogError is event_log.EventLogError
        assert memlane.InvalidQuery is errors.InvalidQuery
        assert memlane.SearchResponse is reports.SearchResponse
        assert memlane.MemoryManager.__module__ == "memlane.application.memory"

    def test_every_exported_class_is_a_public_one(self) -> None:
        for name in memlane.__all__:
            value = getattr(memlane, name)
            if inspect.isclass(value):
                assert value.__name__ == name
                assert value.__module__.startswith("memlane."), name

    def test_the_error_hierarchy_users_catch(self) -> None:
        exported = {getattr(memlane, n) for n in memlane.__all__}
        roots = {
            memlane.DomainError,
            memlane.EmbeddingError,
            memlane.SourceError,
            memlane.StoreError,
            memlane.EventLogError,
        }
        raised = {e for e in exported if inspect.isclass(e) and issubclass(e, Exception)}
        assert roots <= raised
        for error in raised:
            assert any(issubclass(error, root) for root in roots), error

    def test_unknown_attributes_still_raise(self) -> None:
        name = "NoSuchThing"
        with pytest.raises(AttributeError, match=name):
            getattr(memlane, name)


class TestOpen:
    def test_open_takes_what_open_manager_takes(self) -> None:
        # memlane.open repeats the signature (to stay lazy); this keeps the two from drifting.
        assert inspect.signature(memlane.open) == inspect.signature(open_manager)

    def test_every_parameter_is_keyword_only(self) -> None:
        params = inspect.signature(memlane.open).parameters.values()
        assert {p.kind for p in params} == {inspect.Parameter.KEYWORD_ONLY}


class TestCheapImport:
    def test_import_memlane_loads_no_heavy_module(self) -> None:
        heavy = ("numpy", "grpc", "sqlalchemy", "sqlite_vec", "httpx", "dependency_injector")
        ours = ("memlane.adapters", "memlane.entrypoints", "memlane.application.memory")
        loaded = _python(
            "import sys, memlane; print(' '.join(sorted(m for m in sys.modules"
            f" if m.split('.')[0] in {heavy!r} or m.startswith({ours!r}))))"
        )
        assert loaded == ""

    def test_manager_class_loads_on_first_access(self) -> None:
        loaded = _python(
            "import sys, memlane; before = 'memlane.application.memory' in sys.modules;"
            " memlane.MemoryManager; print(before, 'memlane.application.memory' in sys.modules)"
        )
        assert loaded == "False True"


class TestVersion:
    def test_version_is_a_release_string(self) -> None:
        parts = memlane.__version__.split(".")
        assert len(parts) >= 3
        assert all(p.isdigit() for p in parts[:3])

    def test_installed_metadata_agrees(self) -> None:
        from importlib.metadata import version

        assert version("memlane") == memlane.__version__

    def test_cli_prints_it(self) -> None:
        script = Path(sys.executable).with_name("memlane")
        command = (
            [str(script)] if script.exists() else [sys.executable, "-m", "memlane.entrypoints"]
        )
        done = subprocess.run(
            [*command, "--version"], capture_output=True, text=True, check=True, timeout=60
        )
        assert done.stdout.strip() == f"memlane {memlane.__version__}"


class TestPackaging:
    def _pyproject(self) -> dict[str, Any]:
        return tomllib.loads((PACKAGE_DIR / "pyproject.toml").read_text(encoding="utf-8"))

    def test_the_version_is_written_once(self) -> None:
        project = self._pyproject()
        assert "version" not in project["project"]
        assert project["project"]["dynamic"] == ["version"]
        dynamic = project["tool"]["setuptools"]["dynamic"]["version"]
        assert dynamic == {"attr": "memlane.__version__"}

    def test_type_information_ships(self) -> None:
        assert (PACKAGE_DIR / "py.typed").is_file()
        data = self._pyproject()["tool"]["setuptools"]["package-data"]
        assert "py.typed" in data["memlane"]
        # The generated gRPC code is typed by its .pyi files only.
        assert "*.pyi" in data["memlane.entrypoints.grpc._generated"]


GOOD = """
import memlane
from memlane import (
    GetResult, InvalidQuery, MemoryManager, SearchResponse, SearchResult, StatusReport, StoreError,
    SyncReport,
)


def first_hit(memory: MemoryManager, query: str) -> SearchResult | None:
    try:
        response: SearchResponse = memory.search(query, max_results=3, min_score=0.2)
    except (InvalidQuery, StoreError):
        return None
    return response.results[0] if response.results else None


def main() -> str:
    with memlane.open(workspace="ws", agent_id="a", config={"provider": "none"}) as memory:
        hit = first_hit(memory, "api")
        line: int = hit.start_line if hit else 0
        report: SyncReport = memory.sync(force=False)
        status: StatusReport = memory.status(deep=True)
        got: GetResult = memory.get("MEMORY.md", from_line=line, lines=5)
        return f"{memlane.__version__} {report.files_indexed} {status.chunks} {got.text}"
"""

# Each line must be an error: the signature is checked, not `**kwargs: Any`.
BAD = """
import memlane

memlane.open(workspac="ws")
memlane.open("ws")
memlane.open(start_background="yes")
memlane.NoSuchThing
n: int = memlane.open().search("q").results[0].path
"""


def test_a_consumer_type_checks_under_mypy_strict(tmp_path: Path) -> None:
    # mypy cannot follow the editable install's import hook: show it the package by a symlink.
    stubs = tmp_path / "path"
    stubs.mkdir()
    (stubs / "memlane").symlink_to(PACKAGE_DIR, target_is_directory=True)
    (tmp_path / "good.py").write_text(textwrap.dedent(GOOD))
    (tmp_path / "bad.py").write_text(textwrap.dedent(BAD))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--follow-imports=silent",
            "--no-error-summary",
            "--hide-error-context",
            "--show-error-codes",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--config-file",
            os.devnull,
            "good.py",
            "bad.py",
        ],
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=240,
        env={**os.environ, "MYPYPATH": str(stubs)},
    )
    report = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert not [line for line in report if line.startswith("good.py")], done.stdout
    flagged = {int(line.split(":")[1]) for line in report if line.startswith("bad.py")}
    assert flagged == {4, 5, 6, 7, 8}, done.stdout
