"""The facade holds few things (issue #25 item 3).

`MemoryManager` takes one collaborator per use-case family (plus the settings and whose memory
it is), not the services behind them, and `application/memory.py` stays short enough to read in
one sitting. The families and the facade are built in the composition root alone.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from memlane.application.memory import MemoryManager

ROOT = Path(__file__).resolve().parents[2]
MAX_CONSTRUCTOR_PARAMETERS = 8
MAX_FACADE_LINES = 250  # exclusive
# The facade and its collaborators; only entrypoints/container/ may call their constructors.
BUILT_BY_THE_CONTAINER = frozenset(
    {"MemoryManager", "AgentDirectory", "IndexUpkeep", "IndexWatcher"}
    | {"Searching", "Reading", "Reporting"}
)
PACKAGE_PARTS = ("__init__.py", "domain", "application", "adapters", "entrypoints")


def _package_modules() -> list[Path]:
    modules: list[Path] = []
    for part in PACKAGE_PARTS:
        path = ROOT / part
        modules.extend([path] if path.is_file() else sorted(path.rglob("*.py")))
    return [m for m in modules if "_generated" not in m.parts]


def _constructor_calls(module: Path) -> list[str]:
    """`name:line` of each call of a facade class in `module` (bare or through an attribute)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if name in BUILT_BY_THE_CONTAINER:
            found.append(f"{name}:{node.lineno}")
    return found


class TestFacadeSize:
    def test_the_constructor_takes_at_most_eight_collaborators(self) -> None:
        parameters = [
            p for p in inspect.signature(MemoryManager.__init__).parameters if p != "self"
        ]

        assert len(parameters) <= MAX_CONSTRUCTOR_PARAMETERS, parameters

    def test_memory_py_stays_under_250_lines(self) -> None:
        lines = (ROOT / "application" / "memory.py").read_text(encoding="utf-8").splitlines()

        assert len(lines) < MAX_FACADE_LINES


class TestBuiltInTheContainer:
    def test_no_module_outside_the_container_builds_the_facade_or_its_families(self) -> None:
        container = ROOT / "entrypoints" / "container"
        outside = {
            str(m.relative_to(ROOT)): calls
            for m in _package_modules()
            if container not in m.parents and (calls := _constructor_calls(m))
        }

        assert outside == {}

    def test_the_check_sees_a_call_where_there_is_one(self, tmp_path: Path) -> None:
        """The walk above would pass on any tree if it missed calls: show it finds them."""
        module = tmp_path / "elsewhere.py"
        module.write_text(
            "from memlane.application import memory, searching\n"
            "m = memory.MemoryManager(settings=s)\n"
            "s = searching.Searching()\n"
            "r = Reading(agents=a)\n",
            encoding="utf-8",
        )

        assert _constructor_calls(module) == ["MemoryManager:2", "Searching:3", "Reading:4"]
