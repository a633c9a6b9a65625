"""A first index killed half-way is resumed for the workspace it started on, from any folder.

Its finished record (the index meta) is written last, so before this fix a resume without
`--workspace` found no recorded workspace, bound the index to the current folder and dropped the
rows already written (`0 removed`, exit 0). The start record names the workspace: it is used.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlean

from tests.e2e.test_cli_trust import keyword_only, make_home, run, status, store

pytestmark = pytest.mark.e2e

NOTES = 2500  # keyword-only: seconds of indexing, time enough to kill it half-way


def _indexed_rows(path: Path) -> int:
    try:
        conn = sqlean.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return int(conn.execute("SELECT count(*) FROM files").fetchone()[0])
        finally:
            conn.close()
    except sqlean.Error:
        return 0


def _killed_half_way(home: Path) -> int:
    """Start `index` in the workspace and SIGKILL it once some files are written."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMLANE_", "OPENAI_"))}
    env["HOME"] = str(home)
    args = ["--state-dir", str(home / "state"), "--config", str(home / "memlane.json"), "index"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "memlane.entrypoints", *args],
        cwd=home / "ws",
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    rows = 0
    while time.monotonic() < deadline and proc.poll() is None:
        rows = _indexed_rows(store(home))
        if rows >= 200:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the index finished before it could be interrupted"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    return rows


def test_a_resume_from_another_folder_keeps_the_started_workspace(tmp_path: Path) -> None:
    home = make_home(tmp_path, config=keyword_only(sources=["memory"]))
    for n in range(NOTES):
        (home / "ws" / "memory" / f"n{n:05}.md").write_text(f"# Note {n}\n\nword{n} text\n")
    written = _killed_half_way(home)
    assert 0 < written < NOTES + 2

    seen = status(home, cwd=home / "elsewhere")  # no --workspace, another folder
    resumed = run(home, "index", cwd=home / "elsewhere")

    assert seen["workspace"] == str(home / "ws")
    assert resumed.returncode == 0, resumed.stderr
    assert "bound to the current directory" not in resumed.stderr
    assert status(home, cwd=home / "elsewhere")["files"] == NOTES + 2  # the notes and the two


def test_another_workspace_is_refused_as_for_a_finished_index(tmp_path: Path) -> None:
    home = make_home(tmp_path, config=keyword_only(sources=["memory"]))
    for n in range(NOTES):
        (home / "ws" / "memory" / f"n{n:05}.md").write_text(f"# Note {n}\n\nword{n} text\n")
    _killed_half_way(home)
    other = home / "other"
    (other / "memory").mkdir(parents=True)
    (other / "MEMORY.md").write_text("# Other\n")
    written = _indexed_rows(store(home))

    refused = run(home, "--workspace", str(other), "index", cwd=home / "elsewhere")

    assert refused.returncode == 1, refused.stdout
    assert str(home / "ws") in refused.stderr
    assert _indexed_rows(store(home)) == written  # nothing dropped
