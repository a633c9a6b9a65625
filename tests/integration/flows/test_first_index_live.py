"""A first index written straight into the live store (issue #18), through the real CLI.

With no index yet there is nothing to protect, so `memlane index` commits each file's keyword
rows in its own transaction: a `memlane search` in another process answers from the files
indexed so far and says how far indexing is, instead of starting a second index of its own;
a SIGKILL midway leaves a consistent index that the next `index` completes into what a clean
build gives. The index process is frozen (SIGSTOP) or killed at the moment the first files are
seen committed, from outside, so nothing here depends on timing.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from memlane.bench.kill_checks import verify
from memlane.bench.kill_rounds import Cli, timed
from memlane.bench.kill_workspace import KillWorkspace, Sizes

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# Enough files that the index is still running when its first files are seen committed.
SIZES = Sizes(notes=500, transcripts=4, messages=20)


def _indexed(db: Path) -> tuple[list[str], bool] | None:
    """(paths of the files indexed so far, whether the index is complete), read from outside;
    None before the schema is there."""
    if not db.exists():
        return None
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            paths = [str(r[0]) for r in conn.execute("SELECT path FROM files")]
            complete = conn.execute("SELECT 1 FROM meta WHERE key = 'index_meta'").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return paths, complete is not None


def _first_files_seen(child: subprocess.Popen[bytes], db: Path) -> list[str]:
    """Wait until some files are committed and the index is not complete; return their paths.
    Fails when the index process ends first (an index that commits everything at once)."""
    while child.poll() is None:
        seen = _indexed(db)
        if seen is not None and seen[0] and not seen[1]:
            return seen[0]
        time.sleep(0.002)
    pytest.fail(f"`index` exited {child.returncode} before any file was seen committed alone")


def _dump(db: Path) -> dict[str, object]:
    """What two builds of the same files must share (rids, times and the db id aside)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        q = conn.execute
        meta = json.loads(q("SELECT value FROM meta WHERE key = 'index_meta'").fetchone()[0])
        return {
            "files": q("SELECT source, path, hash, size FROM files ORDER BY 1, 2").fetchall(),
            "chunks": q(
                "SELECT id, source, path, start_line, end_line, hash, text, model, timestamp "
                "FROM chunks ORDER BY id"
            ).fetchall(),
            "meta": meta,
            "record": q("SELECT count(*) FROM meta WHERE key = 'first_index'").fetchone()[0],
        }
    finally:
        conn.close()


def _search(cli: Cli, word: str) -> dict[str, object]:
    done = cli.run("search", "--json", word)
    assert done.returncode == 0, done.stderr[-2000:]
    payload: dict[str, object] = json.loads(done.stdout)
    return payload


def _word_of(ws: KillWorkspace, paths: list[str]) -> tuple[str, str]:
    """A planted word of one of `paths` (a note), and that path."""
    for path in sorted(paths):
        words = ws.live.get(path)
        if not path.startswith("sessions/") and words:
            return sorted(words)[0], path
    pytest.fail(f"no planted word in {paths[:5]}")


def test_a_search_in_another_process_answers_while_the_first_index_runs(
    tmp_path: Path,
) -> None:
    ws = KillWorkspace(tmp_path, random.Random(18), SIZES)
    ws.create("none")
    cli = Cli(ws)
    child = cli.start(("index",), tmp_path / "index.log")
    try:
        _first_files_seen(child, ws.db)
        os.kill(child.pid, signal.SIGSTOP)  # frozen: the search runs while it is mid-index
        # Read again once frozen: a file may have been committed between the look and the stop.
        frozen = _indexed(ws.db)
        assert frozen is not None and not frozen[1], "the index completed before the stop"
        paths = frozen[0]
        word, path = _word_of(ws, paths)

        payload = _search(cli, word)

        assert child.poll() is None  # answered before the index finished
        results = payload["results"]
        assert isinstance(results, list)
        assert [r["path"] for r in results][:1] == [path]
        warnings = payload.get("warnings")
        assert isinstance(warnings, list)
        progress = [w for w in warnings if w.startswith("indexing ")]
        assert len(progress) == 1, warnings
        assert f"/ {len(ws.live):,} files" in progress[0]
        assert "results cover the files indexed so far" in progress[0]
        status = cli.run("status", "--json")
        assert status.returncode == 0, status.stderr[-2000:]
        assert json.loads(status.stdout)["indexing"] == {
            "filesDone": len(paths),
            "filesTotal": len(ws.live),
            "running": True,
        }
        text = cli.run("status").stdout
        assert f"Indexing: {len(paths):,} / {len(ws.live):,} files" in text
        assert "first index running" in text
        # The search did not start an index of its own: only the frozen process writes.
        seen = _indexed(ws.db)
        assert seen is not None and not seen[1] and len(seen[0]) == len(paths)
    except BaseException:
        child.kill()
        child.wait()
        raise
    finally:
        os.kill(child.pid, signal.SIGCONT)
    assert child.wait(timeout=600) == 0, (tmp_path / "index.log").read_text()[-2000:]

    assert verify(ws, vectors=False) == []
    after = _search(cli, word)
    warnings = after.get("warnings", [])
    assert isinstance(warnings, list)
    assert not [w for w in warnings if str(w).startswith("indexing ")]
    assert _dump(ws.db)["record"] == 0


def test_a_first_index_killed_midway_is_completed_like_a_clean_build(tmp_path: Path) -> None:
    ws = KillWorkspace(tmp_path / "killed", random.Random(19), SIZES)
    ws.create("none")
    cli = Cli(ws)
    child = cli.start(("index",), tmp_path / "index.log")
    try:
        _first_files_seen(child, ws.db)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    seen = _indexed(ws.db)
    assert seen is not None and seen[0] and not seen[1]
    with sqlite3.connect(f"file:{ws.db}?mode=ro", uri=True) as conn:
        kept = dict(conn.execute("SELECT id, rid FROM chunks").fetchall())

    # Meanwhile the files change: edits, additions, deletions (some of them already indexed).
    ws.mutate()

    timed(cli, "index")

    assert verify(ws, vectors=False) == []
    # The same files, indexed from scratch in one go.
    clean = KillWorkspace(tmp_path / "clean", random.Random(0), SIZES)
    clean.root.mkdir()
    clean.write_config("none")
    subprocess.run(["cp", "-a", str(ws.workspace), str(clean.workspace)], check=True)
    clean.sessions.mkdir(parents=True)
    for transcript in ws.sessions.iterdir():
        subprocess.run(["cp", "-a", str(transcript), str(clean.sessions)], check=True)
    timed(Cli(clean), "index")
    resumed, fresh = _dump(ws.db), _dump(clean.db)
    assert resumed["files"] == fresh["files"]
    assert resumed["chunks"] == fresh["chunks"]
    assert {**resumed["meta"], "workspace": ""} == {**fresh["meta"], "workspace": ""}  # type: ignore[dict-item]
    assert resumed["record"] == fresh["record"] == 0
    # The files the killed run wrote and nobody changed were kept, not written again.
    with sqlite3.connect(f"file:{ws.db}?mode=ro", uri=True) as conn:
        now = dict(conn.execute("SELECT id, rid FROM chunks").fetchall())
    assert any(now.get(cid) == rid for cid, rid in kept.items())
