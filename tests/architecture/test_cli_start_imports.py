"""The console script does not import rich, which structlog would pull in when installed.

structlog imports rich (and better_exceptions) at import time whenever they are installed, to
pretty-print tracebacks; memlane renders with structlog's plain formatter, so the import was
paid by every command's start for nothing (entrypoints/launch.py). rich is in this environment
(import-linter depends on it), so the test can tell.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

# Run in a child, the console script's main ends the process; an atexit callback (which the CLI's
# fast exit still runs) reports which of the modules it cares about were really loaded.
_REPORT = """
import atexit, sys
def _report():
    loaded = sorted(n for n, m in sys.modules.items() if m is not None)
    sys.stderr.write("LOADED " + " ".join(loaded) + "\\n")
atexit.register(_report)
"""


def _loaded(tmp_path: Path, code: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", _REPORT + code],
        cwd=tmp_path, capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("LOADED ")]
    return set(line.split()[1:])


def test_the_console_script_runs_without_importing_rich(tmp_path: Path) -> None:
    assert importlib.util.find_spec("rich") is not None  # else this test could not fail
    # The console script's main with a command that ends the process (--version, via click).
    code = (
        "sys.argv = ['memlane', '--version']\nfrom memlane.entrypoints.launch import main\nmain()\n"
    )
    modules = _loaded(tmp_path, code)

    assert "structlog.dev" in modules  # the path really went through structlog's rich probe
    assert not {m for m in modules if m.split(".")[0] in ("rich", "better_exceptions")}


def test_a_host_app_importing_memlane_keeps_rich_available(tmp_path: Path) -> None:
    modules = _loaded(tmp_path, "import memlane.entrypoints.api\nimport structlog.dev\n")

    assert "rich.traceback" in modules  # structlog found rich, as it would without memlane


def test_a_keyword_only_index_and_search_never_load_numpy(tmp_path: Path) -> None:
    """numpy is ~0.1 s of a process's start; only the vector modules need it, loaded when a
    vector is stored or searched (the store's engine, the blob codec, sqlite-vec found by path)."""
    (tmp_path / "ws" / "memory").mkdir(parents=True)
    (tmp_path / "ws" / "memory" / "a.md").write_text("# Deploys\n\nThe rollback uses tags.\n")
    where = f"'--state-dir', {str(tmp_path / 'state')!r}, '--workspace', {str(tmp_path / 'ws')!r}"
    for command in ("'index'", "'search', 'rollback'"):
        code = (
            "import os\nos.environ['MEMLANE_PROVIDER'] = 'none'\n"
            "os.environ['MEMLANE_NO_DAEMON'] = '1'\n"
            f"sys.argv = ['memlane', {where}, {command}]\n"
            "from memlane.entrypoints.launch import main\nmain()\n"
        )
        modules = _loaded(tmp_path, code)

        assert "memlane.adapters.store.sqlite_index_store" in modules, command  # it did open
        assert "numpy" not in modules, command
