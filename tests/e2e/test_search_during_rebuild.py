"""A search while another process runs `index --force` answers from the index as it was and says
so; it does not run the same rebuild a second time (it did: twice the CPU, the search held for
the whole rebuild)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.test_cli_trust import keyword_only, make_home, run, store

pytestmark = pytest.mark.e2e

NOTES = 4000  # keyword-only: a rebuild of several seconds


def _rebuilds(home: Path) -> int:
    done = run(home, "events", "--json", "--limit", "10000")
    assert done.returncode == 0, done.stderr
    return sum(1 for e in json.loads(done.stdout) if e["type"] == "index_rebuilt")


def test_a_search_beside_a_forced_rebuild_does_not_run_it_again(tmp_path: Path) -> None:
    home = make_home(tmp_path, config=keyword_only(sources=["memory"]))
    for n in range(NOTES):
        (home / "ws" / "memory" / f"n{n:05}.md").write_text(f"# Note {n}\n\nword{n} text\n")
    assert run(home, "index").returncode == 0
    before = _rebuilds(home)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMLANE_", "OPENAI_"))}
    env["HOME"] = str(home)
    args = ["--state-dir", str(home / "state"), "--config", str(home / "memlane.json")]
    with subprocess.Popen(
        [sys.executable, "-m", "memlane.entrypoints", *args, "index", "--force"],
        cwd=home / "ws", env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    ) as forced:  # fmt: skip
        deadline = time.monotonic() + 60
        while not list(store(home).parent.glob("memory.db.tmp-*")):
            assert forced.poll() is None, "the rebuild ended before a search could meet it"
            assert time.monotonic() < deadline
            time.sleep(0.05)

        found = run(home, "search", "--no-daemon", "word17")

        assert forced.wait(120) == 0
    assert found.returncode == 0, found.stderr
    assert "another process is rebuilding the index" in found.stderr
    assert "memory/n00017.md" in found.stdout  # the index as it was answered
    assert _rebuilds(home) == before + 1  # the forced one only
