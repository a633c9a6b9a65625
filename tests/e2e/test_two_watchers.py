"""Two `memlane watch` of one workspace and state folder: each change is logged once (the lease
holder syncs it, the other stands by), and once the holder is killed the other takes over, so a
change made after that is indexed too, and logged once."""

from __future__ import annotations

import contextlib
import signal
import sqlite3
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import pytest

from memlane.adapters.sources.watch_lease import FileWatchLease
from tests.e2e._daemon_support import until
from tests.e2e._loud_support import cli_env, make_home

pytestmark = pytest.mark.e2e


def _logged(db: Path, kind: str, path: str) -> int:
    with contextlib.closing(sqlite3.connect(db, timeout=30)) as conn:
        row = conn.execute(
            "SELECT count(*) FROM events WHERE type = ? AND json_extract(data, '$.path') = ?",
            (kind, path),
        ).fetchone()
    return int(row[0])


def _indexed(db: Path, path: str) -> bool:
    return _logged(db, "file_indexed", path) > 0


def test_two_watchers_log_each_change_once_and_the_survivor_takes_over(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    db = home / "state" / "agents" / "main" / "memory.db"
    config = home / "config.json5"
    config.write_text("{agents: {defaults: {memorySearch: {sync: {watchDebounceMs: 200}}}}}")
    base = [sys.executable, "-m", "memlane.entrypoints", "--config", str(config)]
    base += ["--state-dir", str(home / "state"), "--workspace", str(home / "ws")]
    subprocess.run([*base, "index"], env=cli_env(home), check=True, capture_output=True)
    lease = FileWatchLease(str(home / "state" / "agents" / "main" / "watch.lease"))
    watchers = []
    try:
        for _ in range(2):
            proc = subprocess.Popen(
                [*base, "watch"], env=cli_env(home), stderr=subprocess.PIPE, text=True
            )
            watchers.append(proc)
            assert proc.stderr is not None
            while "watching" not in proc.stderr.readline():
                assert proc.poll() is None

        for i in range(3):
            (home / "ws" / "memory" / f"n{i}.md").write_text(f"# N{i}\n\nNarwhals: {i}.\n")
            assert until(partial(_indexed, db, f"memory/n{i}.md"), timeout=60.0)
        time.sleep(1.0)  # the other watcher's debounce window and sync, had it run one
        for i in range(3):
            assert _logged(db, "file_changed", f"memory/n{i}.md") == 1
            assert _logged(db, "file_indexed", f"memory/n{i}.md") == 1

        holder = lease.holder()
        assert holder is not None
        dead = next(p for p in watchers if p.pid == holder.pid)
        dead.send_signal(signal.SIGKILL)
        dead.wait(timeout=30)
        (home / "ws" / "memory" / "late.md").write_text("# Late\n\nThe walrus count is 7.\n")

        assert until(partial(_indexed, db, "memory/late.md"), timeout=60.0)
        survivor = lease.holder()
        assert survivor is not None and survivor.pid != holder.pid
        time.sleep(1.0)
        assert _logged(db, "file_changed", "memory/late.md") == 1
    finally:
        for proc in watchers:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
            if proc.stderr is not None:
                proc.stderr.close()
