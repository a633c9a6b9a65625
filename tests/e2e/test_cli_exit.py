"""The CLI ends without the interpreter's teardown (entrypoints/fast_exit.py): whatever it
skips must not be missed: the whole output, the exit code, atexit callbacks, running threads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e


def _run(code: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A child that runs `code`, then the console-script entry point with `args`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env["HOME"] = str(tmp_path)
    child = f"import sys\n{code}\nfrom memlane.entrypoints.cli import main\n"
    child += f"sys.argv = ['memlane', *{list(args)!r}]\nmain()\n"
    return subprocess.run(
        [sys.executable, "-c", child],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        check=False,
    )


def _workspace(tmp_path: Path, notes: int) -> list[str]:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    for i in range(notes):
        text = f"# Runbook {i}\n\nThe failover drill number {i} restarts the ingest queue.\n"
        (ws / "memory" / f"runbook-{i:03}.md").write_text(text)
    config = tmp_path / "config.json5"
    config.write_text("{agents: {defaults: {memorySearch: {provider: 'none'}}}}\n")
    return ["--config", str(config), "--state-dir", str(tmp_path / "state"), "--workspace", str(ws)]


def test_a_long_answer_reaches_the_pipe_whole(tmp_path: Path) -> None:
    options = _workspace(tmp_path, 60)

    done = _run("", tmp_path, *options, "search", "--json", "--max-results", "60", "failover")

    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)["results"]
    assert len(results) == 60
    assert {r["path"] for r in results} == {f"memory/runbook-{i:03}.md" for i in range(60)}


def test_exit_codes_are_the_commands(tmp_path: Path) -> None:
    options = _workspace(tmp_path, 1)

    usage = _run("", tmp_path, *options, "search")
    refused = _run("", tmp_path, *options, "get", "../../etc/passwd")

    assert usage.returncode == 2 and "missing search query" in usage.stderr
    assert refused.returncode == 1 and refused.stderr.strip()


def test_atexit_callbacks_still_run(tmp_path: Path) -> None:
    code = "import atexit\natexit.register(lambda: sys.stderr.write('atexit ran\\n'))"

    done = _run(code, tmp_path, "--version")

    assert done.returncode == 0
    assert "atexit ran" in done.stderr


def test_a_running_worker_thread_is_waited_for(tmp_path: Path) -> None:
    marker = tmp_path / "worker-finished"
    code = (
        "import threading, time\n"
        "def work():\n"
        "    time.sleep(0.5)\n"
        f"    open({str(marker)!r}, 'w').write('done')\n"
        "threading.Thread(target=work).start()"
    )

    done = _run(code, tmp_path, "--version")

    assert done.returncode == 0, done.stderr
    assert marker.read_text() == "done"
