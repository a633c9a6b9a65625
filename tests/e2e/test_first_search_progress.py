"""Item 14.8: the first search of a large workspace shows its sync's progress.

On a terminal (a real pseudo-terminal on stderr): one line rewritten in place with files, chunks
embedded and an ETA. Elsewhere: plain lines every MEMLANE_PROGRESS_SECONDS (0 here, so every
step prints and the test does not depend on timing).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e._loud_support import cli_env, make_home

pytestmark = pytest.mark.e2e

FILES = 300


@pytest.fixture
def home(tmp_path: Path) -> Path:
    notes = {
        f"memory/note-{i:04d}.md": f"# Note {i}\n\ntopic{i} and shared words\n"
        for i in range(FILES)
    }
    notes["MEMORY.md"] = "# Preferences\n\nThe user prefers tabs over spaces.\n"
    return make_home(tmp_path, notes)


def _args(home: Path) -> list[str]:
    return [sys.executable, "-m", "memlane.entrypoints", "--state-dir", str(home / "state"),
            "--workspace", str(home / "ws"), "search", "tabs"]  # fmt: skip


def test_a_pipe_gets_plain_progress_lines(home: Path) -> None:
    done = subprocess.run(
        _args(home), capture_output=True, text=True, timeout=240, check=False,
        env=cli_env(home, MEMLANE_PROGRESS_SECONDS="0"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "MEMORY.md" in done.stdout
    lines = [ln for ln in done.stderr.splitlines() if ln.startswith("rebuild: ")]
    assert lines and "\r" not in done.stderr
    assert f"rebuild: {FILES + 1}/{FILES + 1} files, 0 chunks embedded" in done.stderr
    assert any(re.match(rf"rebuild: \d+/{FILES + 1} files, .* eta \d+:\d\d$", ln) for ln in lines)


def test_a_terminal_gets_one_line_rewritten_in_place(home: Path) -> None:
    leader, follower = os.openpty()
    try:
        proc = subprocess.Popen(
            _args(home), stdout=subprocess.PIPE, stderr=follower, env=cli_env(home),
        )  # fmt: skip
        os.close(follower)
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        out, _ = proc.communicate(timeout=240)
    finally:
        os.close(leader)
    text = seen.decode(errors="replace")
    assert proc.returncode == 0, text
    assert b"MEMORY.md" in out
    assert "\rrebuild: " in text and " eta " in text
    assert f"rebuild: {FILES + 1}/{FILES + 1} files" in text
