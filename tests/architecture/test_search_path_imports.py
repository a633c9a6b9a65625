"""A CLI search on the SQLite store imports none of the adapters it does not use.

A fresh `memlane search` process pays for every module it imports before its first line of
work, and at a million chunks those imports were the second cost after the sync's file scan
(bench/cli_cold_start.py, bench/RESULTS.md). The composition root imports the HTTP providers
(httpx and five API clients), the PostgreSQL adapters and watchdog only when the configuration
selects them; a child process runs a real CLI search and lists what it imported.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

from memlane.adapters.embedding._http import HttpEmbeddingProvider
from memlane.entrypoints.container import HTTP_PROVIDERS, http_provider_class

NOT_ON_THE_SEARCH_PATH = (
    "httpx",
    "watchdog",
    "memlane.adapters.embedding._http",
    "memlane.adapters.embedding.gguf",
    "memlane.adapters.postgres",
    "memlane.adapters.sources.watcher",
)

CHILD = """
import json, sys
from memlane.entrypoints.cli import cli  # not main(): it ends the process when done
sys.argv = ["memlane", "--state-dir", {state!r}, "--workspace", {workspace!r},
            "--config", {config!r}, *{command!r}]
try:
    cli.main(prog_name="memlane")
except SystemExit as exc:
    if exc.code:
        raise
print("MODULES " + json.dumps(sorted(sys.modules)))
"""


def _search_modules(
    tmp_path: Path, provider: str, command: tuple[str, ...] = ("search", "--json", "rollback")
) -> tuple[str, set[str]]:
    workspace = tmp_path / "ws"
    (workspace / "memory").mkdir(parents=True, exist_ok=True)
    (workspace / "MEMORY.md").write_text("# Deploys\n\nA rollback uses the previous image tag.\n")
    config = tmp_path / "config.json5"
    config.write_text(f"{{agents: {{defaults: {{memorySearch: {{provider: '{provider}'}}}}}}}}\n")
    code = CHILD.format(
        state=str(tmp_path / "state"), workspace=str(workspace), config=str(config), command=command
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=180, check=False
    )
    assert done.returncode == 0, done.stderr
    payload, _, modules = done.stdout.rpartition("MODULES ")
    return payload, set(json.loads(modules))


def _imported(modules: set[str], name: str) -> bool:
    return name in modules or any(m.startswith(name + ".") for m in modules)


def test_a_keyword_search_on_sqlite_imports_no_http_postgres_or_watcher(tmp_path: Path) -> None:
    payload, modules = _search_modules(tmp_path, "none")

    assert '"MEMORY.md"' in payload
    assert "memlane.adapters.store.sqlite_index_store" in modules  # the child did search
    assert [n for n in NOT_ON_THE_SEARCH_PATH if _imported(modules, n)] == []


def test_a_search_with_the_bundled_model_imports_no_http_postgres_or_watcher(
    tmp_path: Path,
) -> None:
    payload, modules = _search_modules(tmp_path, "local")

    assert '"mode": "hybrid"' in payload
    assert "memlane.adapters.embedding.local" in modules
    assert [n for n in NOT_ON_THE_SEARCH_PATH if _imported(modules, n)] == []


def test_status_of_an_index_without_a_code_file_loads_no_numpy(tmp_path: Path) -> None:
    """numpy (~0.1 s of a process's start) served only the vector engine's line of `status`,
    which for an index under the code file's threshold is a count in SQL."""
    _search_modules(tmp_path, "none", ("index",))

    said, modules = _search_modules(tmp_path, "none", ("status", "--json"))

    assert json.loads(said)["vectorIndex"]["state"] == "exact: 0 vectors, below 20000"
    assert not _imported(modules, "numpy")


def test_every_http_provider_is_listed_under_its_own_id() -> None:
    for name, (module, attribute) in HTTP_PROVIDERS.items():
        cls = http_provider_class(name)

        assert cls is getattr(importlib.import_module(module), attribute)
        assert issubclass(cls, HttpEmbeddingProvider)
        assert cls.provider_id == name
