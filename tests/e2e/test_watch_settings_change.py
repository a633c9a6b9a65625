"""A `memlane watch` started before a config change, and the CLI run after it: the CLI rebuilds
the index to the new settings once, and the watcher does not rebuild it back. Before, each
rebuilt the whole index to its own settings at every change and search, with nothing said."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memlane.adapters.sources.watch_lease import FileWatchLease
from tests.e2e._daemon_support import until

pytestmark = pytest.mark.e2e

BLOCK = "{agents: {defaults: {memorySearch: {provider: 'none', %s sync: {watchDebounceMs: 200}}}}}"


def test_the_watcher_yields_to_the_new_settings_and_says_so(tmp_path: Path) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Notes\n\nThe alpha bucket is in Oslo.\n")
    sessions = state / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    record = {"type": "message", "message": {"role": "user", "content": "session newt"}}
    (sessions / "s.jsonl").write_text(json.dumps(record) + "\n")
    config = tmp_path / "config.json5"
    config.write_text(BLOCK % "")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env["HOME"] = str(tmp_path)
    base = [sys.executable, "-m", "memlane.entrypoints", "--config", str(config)]
    base += ["--state-dir", str(state), "--workspace", str(ws)]
    lease = FileWatchLease(str(state / "agents" / "main" / "watch.lease"))

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*base, *args], capture_output=True, text=True, env=env, timeout=120, check=False
        )

    def rebuilds() -> list[int]:
        done = run("events", "--json", "--limit", "1000")
        assert done.returncode == 0, done.stderr
        return [e["files"] for e in json.loads(done.stdout) if e["type"] == "index_rebuilt"]

    def fresh() -> bool:
        holder = lease.holder()
        return holder is not None and holder.fresh

    assert run("index").returncode == 0
    lines: list[str] = []
    with subprocess.Popen([*base, "watch"], env=env, stderr=subprocess.PIPE, text=True) as watch:
        reader = threading.Thread(target=lambda: lines.extend(watch.stderr or ()))
        try:
            assert watch.stderr is not None
            while "watching" not in watch.stderr.readline():
                assert watch.poll() is None
            reader.start()
            assert until(fresh)
            config.write_text(BLOCK % "sources: ['memory'],")  # the config changes

            searched = run("search", "alpha")  # the CLI's settings: one rebuild, to 1 file
            with (ws / "MEMORY.md").open("a") as note:
                note.write("\nA change the watcher sees.\n")
            # The watcher's sync of that change is where it used to rebuild back to 2 files.
            assert until(lambda: "sync_skipped_settings_changed_elsewhere" in "".join(lines))
            again = run("search", "alpha")
        finally:
            watch.terminate()
            watch.wait(timeout=60)
            if reader.is_alive():
                reader.join(timeout=60)

    assert searched.returncode == 0 and again.returncode == 0, again.stderr
    assert "restart `memlane watch` (pid" in searched.stderr  # not `memlane daemon stop`
    assert rebuilds() == [2, 1]  # the first index, then the CLI's; none back to 2 files
