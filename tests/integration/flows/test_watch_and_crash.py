"""Whole flows on real files and the real store: the watcher keeps the index in step, and a
sync killed with SIGKILL recovers to exactly what a clean rebuild gives."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlean as sqlite3  # the stdlib build is too old for contentless_delete FTS5 tables

from memlane.application.memory import MemoryManager
from memlane.entrypoints.api import open_manager

pytestmark = pytest.mark.integration

KEYWORD_ONLY = {
    "provider": "none",
    "sync": {"watchDebounceMs": 150, "sessions": {"deltaMessages": 3, "deltaBytes": 0}},
}


def wait_until(check: Callable[[], bool], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"condition not reached in time: {check()}")


def paths_found(manager: MemoryManager, query: str) -> set[str]:
    return {r.path for r in manager.search(query, max_results=20, min_score=0.0).results}


def message(text: str) -> str:
    return json.dumps({"type": "message", "message": {"role": "user", "content": text}}) + "\n"


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[MemoryManager, Path, Path]]:
    ws, state = tmp_path / "ws", tmp_path / "state"
    (ws / "memory").mkdir(parents=True)
    sessions = state / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Notes\n\nThe staging cluster lives in Frankfurt.\n")
    manager = open_manager(
        workspace=ws, state_dir=state, config=KEYWORD_ONLY, env={"HOME": str(tmp_path)}
    )
    manager.sync()
    manager.start(watch=True)
    try:
        yield manager, ws, sessions
    finally:
        manager.close()


class TestWatcherKeepsTheIndexFresh:
    def test_create_edit_rename_delete_and_transcript_growth(
        self, live: tuple[MemoryManager, Path, Path]
    ) -> None:
        """Each change on disk reaches the index without an explicit sync."""
        manager, ws, sessions = live
        note = ws / "memory" / "deploys.md"

        note.write_text("# Deploys\n\nWe deploy on Tuesdays with the zephyr pipeline.\n")
        wait_until(lambda: "memory/deploys.md" in paths_found(manager, "zephyr"))

        note.write_text("# Deploys\n\nWe now deploy on Thursdays with the quokka pipeline.\n")
        wait_until(lambda: "memory/deploys.md" in paths_found(manager, "quokka"))
        assert "memory/deploys.md" not in paths_found(manager, "zephyr")

        note.rename(ws / "memory" / "releases.md")
        wait_until(lambda: paths_found(manager, "quokka") == {"memory/releases.md"})

        (ws / "memory" / "releases.md").unlink()
        wait_until(lambda: paths_found(manager, "quokka") == set())

        chat = sessions / "chat.jsonl"
        chat.write_text(message("the database password rotation is due in March"))
        wait_until(lambda: "sessions/chat.jsonl" in paths_found(manager, "rotation"))
        with chat.open("a") as f:
            for text in ("first new topic: kiwifruit", "second", "third"):
                f.write(message(text))
        wait_until(lambda: "sessions/chat.jsonl" in paths_found(manager, "kiwifruit"))


FILES = 600  # the child is killed after 150: a quarter of the way
CHILD = """
import sys
from memlane.entrypoints.api import open_manager
manager = open_manager(workspace=sys.argv[1], state_dir=sys.argv[2],
                       config={"provider": "none"}, env={"HOME": sys.argv[3]})
def progress(p):
    if p.files_done == 150:
        print("midway", flush=True)
manager.sync(progress=progress)
print("finished", flush=True)
"""


def _snapshot(db: Path) -> tuple[set[tuple[str, str, str]], set[str], int]:
    with sqlite3.connect(db) as conn:
        files = set(conn.execute("select source, path, hash from files"))
        chunk_ids = {row[0] for row in conn.execute("select id from chunks")}
        fts = conn.execute("select count(*) from chunks_fts").fetchone()[0]
    return files, chunk_ids, fts


class TestKilledSync:
    @pytest.mark.parametrize("first_sync_done", [False, True])
    def test_a_sync_killed_midway_recovers_to_a_clean_rebuild(
        self, tmp_path: Path, first_sync_done: bool
    ) -> None:
        """SIGKILL during a full reindex or an incremental sync, restart: same index as clean."""
        ws, state = tmp_path / "ws", tmp_path / "state"
        for i in range(FILES):
            path = ws / "memory" / f"d{i % 20}" / f"n{i}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"# Note {i}\n\nTopic {i % 13} owner person-{i % 7}.\n" * 3)
        if first_sync_done:  # then edit every file so the killed sync is an incremental one
            subprocess.run(
                [sys.executable, "-c", CHILD, str(ws), str(state), str(tmp_path)],
                check=True,
                capture_output=True,
                timeout=300,
            )
            for path in ws.rglob("*.md"):
                path.write_text(path.read_text() + "Edited.\n")

        with subprocess.Popen(
            [sys.executable, "-c", CHILD, str(ws), str(state), str(tmp_path)],
            stdout=subprocess.PIPE,
            text=True,
        ) as child:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "midway"
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=30)
        assert child.returncode == -signal.SIGKILL

        recovered = open_manager(
            workspace=ws, state_dir=state, config={"provider": "none"}, env={"HOME": str(tmp_path)}
        )
        recovered.sync()
        recovered.close()
        clean_state = tmp_path / "clean"
        clean = open_manager(
            workspace=ws,
            state_dir=clean_state,
            config={"provider": "none"},
            env={"HOME": str(tmp_path)},
        )
        clean.sync()
        clean.close()

        got = _snapshot(state / "agents" / "main" / "memory.db")
        want = _snapshot(clean_state / "agents" / "main" / "memory.db")
        assert got[0] == want[0] and len(want[0]) == FILES
        assert got[1] == want[1]
        assert got[2] == want[2] == len(want[1])
