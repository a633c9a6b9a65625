"""A CLI search beside a running `memlane watch`: while the watcher says every change it saw is
indexed, the search skips its scan of the files (and still finds what the watcher indexed);
once the watcher is killed, the search scans again and finds what changed since."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from memlane.adapters.sources.watch_lease import FileWatchLease

pytestmark = pytest.mark.e2e


def _until(check: Callable[[], bool], timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()


def _indexed(home: Path, path: str) -> bool:
    import sqlean

    with sqlean.connect(home / "state" / "agents" / "main" / "memory.db") as conn:
        rows = conn.execute("SELECT count(*) FROM files WHERE path = ?", (path,)).fetchone()
    return bool(rows[0])


def test_a_search_trusts_a_live_fresh_watcher_and_only_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Notes\n\nThe backup bucket is in Oslo.\n")
    config = tmp_path / "config.json5"
    config.write_text(
        "{agents: {defaults: {memorySearch: {provider: 'none', sync: {watchDebounceMs: 200}}}}}"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env["HOME"] = str(tmp_path)
    base = [sys.executable, "-m", "memlane.entrypoints", "--config", str(config)]
    base += ["--state-dir", str(tmp_path / "state"), "--workspace", str(ws)]
    lease = FileWatchLease(str(tmp_path / "state" / "agents" / "main" / "watch.lease"))

    def search(word: str) -> tuple[list[str], str]:
        done = subprocess.run(
            [*base, "--log-level", "debug", "search", "--json", word],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=True,
        )
        return [r["path"] for r in json.loads(done.stdout)["results"]], done.stderr

    def fresh() -> bool:
        holder = lease.holder()
        return holder is not None and holder.fresh

    with subprocess.Popen([*base, "watch"], env=env, stderr=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stderr is not None
            while "watching" not in proc.stderr.readline():
                assert proc.poll() is None
            assert _until(fresh)
            holder = lease.holder()
            assert holder is not None and holder.pid == proc.pid

            paths, log = search("Oslo")
            assert paths == ["MEMORY.md"]
            assert "sync_skipped" in log
            status = subprocess.run(
                [*base, "status"], capture_output=True, text=True, env=env, check=True
            )
            assert f"Watcher: pid {proc.pid}, every change indexed" in status.stdout

            (ws / "memory" / "narwhal.md").write_text("# Narwhals\n\nThe narwhal count is 12.\n")
            assert _until(lambda: _indexed(tmp_path, "memory/narwhal.md"))  # by the watcher
            assert _until(fresh)
            paths, log = search("narwhal")
            assert paths == ["memory/narwhal.md"]  # indexed by the watcher, not this search
            assert "sync_skipped" in log
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)

    assert lease.holder() is None
    (ws / "memory" / "walrus.md").write_text("# Walruses\n\nThe walrus count is 7.\n")
    paths, log = search("walrus")
    assert paths == ["memory/walrus.md"]  # this search scanned: no watcher vouches any more
    assert "sync_skipped" not in log


def test_an_edit_then_a_search_at_once_beside_a_watcher_finds_the_edit(tmp_path: Path) -> None:
    """The lease said fresh before the watcher heard of the edit (its events come late): the
    search asks the watcher, which answers from its change journal, and so scans. The searcher
    is this process, its imports done, so nothing hides the watcher's delay."""
    from memlane.entrypoints.api import close_all, open_manager

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    note = ws / "memory" / "log.md"
    note.write_text("# Log\n\nThe backup bucket is in Oslo.\n")
    config = tmp_path / "config.json5"
    config.write_text(
        "{agents: {defaults: {memorySearch: {provider: 'none', sync: {watchDebounceMs: 200}}}}}"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env["HOME"] = str(tmp_path)
    base = [sys.executable, "-m", "memlane.entrypoints", "--config", str(config)]
    base += ["--state-dir", str(tmp_path / "state"), "--workspace", str(ws)]
    subprocess.run([*base, "index"], env=env, capture_output=True, check=True, timeout=120)
    lease = FileWatchLease(str(tmp_path / "state" / "agents" / "main" / "watch.lease"))

    def fresh() -> bool:
        holder = lease.holder()
        return holder is not None and holder.fresh

    manager = open_manager(
        workspace=str(ws), state_dir=str(tmp_path / "state"), config_path=str(config), env=env
    )
    with subprocess.Popen([*base, "watch"], env=env, stderr=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stderr is not None
            while "watching" not in proc.stderr.readline():
                assert proc.poll() is None
            found = []
            for n in range(5):
                assert _until(fresh)
                word = f"quokka{n}"
                with note.open("a") as out:
                    out.write(f"\nThe {word} sighting.\n")
                manager.refresh()  # what `memlane search` runs before searching
                hits = manager.search(word).results
                found.append(any(word in hit.snippet for hit in hits))
            assert found == [True] * 5
            assert _until(fresh)
            assert lease.confirm() is True  # quiet again: the watcher vouches, asked or not
            assert manager.refresh() is None
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
            close_all()
