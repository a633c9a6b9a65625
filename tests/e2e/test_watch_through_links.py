"""A running `memlane watch` keeps notes behind symlinks fresh, as the scan follows them: an edit
of a linked note's target is indexed by the watcher, and a search beside it that skips its scan
finds the edit. A folder link made while watching, to a folder the watcher cannot see, makes it
vouch for nothing (`status` no longer says every change is indexed): a search then scans, and
finds what changed there."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memlane.adapters.sources.watch_lease import FileWatchLease
from tests.e2e._daemon_support import until

pytestmark = pytest.mark.e2e


def _indexed(state: Path, path: str, word: str) -> bool:
    import sqlean

    with sqlean.connect(state / "agents" / "main" / "memory.db") as conn:
        row = conn.execute(
            "SELECT count(*) FROM chunks WHERE path = ? AND text LIKE ?", (path, f"%{word}%")
        ).fetchone()
    return bool(row[0])


def _append(path: Path, text: str) -> None:
    with path.open("a") as out:
        out.write(text)


def test_edits_behind_links_are_indexed_or_never_vouched_for(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    for folder in ("memory", "other", "notesdir"):
        (ws / folder).mkdir(parents=True)
    (ws / "memory" / "n.md").write_text("# Notes\n\nThe backup bucket is in Oslo.\n")
    (ws / "other" / "x.md").write_text("# Linked\n\nA linked note.\n")
    (ws / "notesdir" / "a.md").write_text("# Folder\n\nA note in a linked folder.\n")
    (ws / "memory" / "link.md").symlink_to("../other/x.md")
    (ws / "memory" / "linkdir").symlink_to("../notesdir")
    config = tmp_path / "config.json5"
    config.write_text(
        "{agents: {defaults: {memorySearch: {provider: 'none', sync: {watchDebounceMs: 200}}}}}"
    )
    state = tmp_path / "state"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env["HOME"] = str(tmp_path)
    base = [sys.executable, "-m", "memlane.entrypoints", "--config", str(config)]
    base += ["--state-dir", str(state), "--workspace", str(ws)]
    subprocess.run([*base, "index"], env=env, capture_output=True, check=True, timeout=120)
    lease = FileWatchLease(str(state / "agents" / "main" / "watch.lease"))

    def fresh() -> bool:
        holder = lease.holder()
        return holder is not None and holder.fresh

    def search(word: str) -> tuple[list[str], str]:
        done = subprocess.run(
            [*base, "--log-level", "debug", "search", "--no-daemon", "--json", word],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=True,
        )
        return [r["path"] for r in json.loads(done.stdout)["results"]], done.stderr

    with subprocess.Popen([*base, "watch"], env=env, stderr=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stderr is not None
            while "watching" not in proc.stderr.readline():
                assert proc.poll() is None

            _append(ws / "other" / "x.md", "\nThe echidna count is 4.\n")
            assert until(lambda: _indexed(state, "memory/link.md", "echidna"))  # the watcher
            assert until(fresh)
            paths, log = search("echidna")
            assert paths == ["memory/link.md"]
            assert "sync_skipped" in log  # the watcher vouched, rightly

            (ws / "later").mkdir()
            (ws / "later" / "b.md").write_text("# Later\n\nA later folder.\n")
            (ws / "memory" / "laterlink").symlink_to("../later")
            assert until(lambda: _indexed(state, "memory/laterlink/b.md", "later folder"))
            _append(ws / "memory" / "n.md", "\nAnother line.\n")  # the watcher syncs again
            assert until(lambda: _indexed(state, "memory/n.md", "Another line"))
            time.sleep(0.5)  # the lease's word follows the sync
            assert not fresh()  # its journal no longer vouches, so neither does the lease
            _append(ws / "later" / "b.md", "\nThe numbat count is 9.\n")  # unwatched
            paths, log = search("numbat")
            assert paths == ["memory/laterlink/b.md"]  # this search scanned
            assert "sync_skipped" not in log
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
