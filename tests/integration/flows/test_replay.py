"""The index is a projection: replaying the event log from position 0 onto an empty store, with
the same files on disk, yields the same index (real files, real SQLite, real container)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlean as sqlite3  # the stdlib build is too old for contentless_delete FTS5 tables

from memlane.domain import events
from memlane.entrypoints.api import open_manager
from memlane.entrypoints.config.runtime import resolve_runtime
from memlane.entrypoints.container import Container

pytestmark = pytest.mark.integration

CONFIG = {"provider": "none"}
Snapshot = tuple[set[tuple[object, ...]], set[tuple[object, ...]], int]


def message(text: str) -> str:
    return json.dumps({"type": "message", "message": {"role": "user", "content": text}}) + "\n"


def snapshot(db: Path) -> Snapshot:
    """Files, chunks (path, lines, hash, text) and keyword rows of the index in `db`."""
    with sqlite3.connect(db) as conn:
        files = set(conn.execute("select source, path, hash, mtime, size from files"))
        chunks = set(
            conn.execute("select id, source, path, start_line, end_line, hash, text from chunks")
        )
        fts = conn.execute("select count(*) from chunks_fts").fetchone()[0]
    return files, chunks, fts


def store_file(state: Path) -> Path:
    (db,) = state.rglob("memory.db")
    return db


class TestReplayFromPositionZero:
    def test_replaying_the_log_onto_an_empty_store_rebuilds_the_same_index(
        self, tmp_path: Path
    ) -> None:
        ws, state = tmp_path / "ws", tmp_path / "state"
        sessions = state / "agents" / "main" / "sessions"
        sessions.mkdir(parents=True)
        (ws / "memory").mkdir(parents=True)
        (ws / "MEMORY.md").write_text("# Notes\n\nThe staging cluster lives in Frankfurt.\n")
        (ws / "memory" / "a.md").write_text("# A\n\nWe deploy on Tuesdays.\n")
        (ws / "memory" / "b.md").write_text("# B\n\nPriya owns billing.\n")
        chat = sessions / "chat.jsonl"
        chat.write_text(message("the password rotation is due in March"))
        env = {"HOME": str(tmp_path)}
        manager = open_manager(workspace=ws, state_dir=state, config=CONFIG, env=env)
        manager.sync()  # no index yet: a full build
        (ws / "memory" / "a.md").write_text("# A\n\nWe now deploy on Thursdays.\n")
        (ws / "memory" / "b.md").unlink()
        (ws / "memory" / "c.md").write_text("# C\n\nThe quokka pipeline ships releases.\n")
        with chat.open("a") as f:
            f.writelines(message(f"follow-up number {i}") for i in range(3))
        manager.sync()
        (ws / "memory" / "c.md").rename(ws / "memory" / "d.md")
        manager.sync()
        history = [record.event for record in manager.recent_events(limit=10_000)]
        manager.close()
        original = snapshot(store_file(state))

        runtime = resolve_runtime(
            env=env,
            cwd=tmp_path,
            workspace=str(ws),
            state=str(tmp_path / "replay"),
            flags={"provider": "none", "sessions.dir": str(sessions)},  # the same transcripts
        )
        runtime.store_path.parent.mkdir(parents=True, exist_ok=True)
        replay = Container(runtime_config=runtime, env=env)
        replay.event_log().append(history)
        handled = replay.application.bus().catch_up()
        replay.application.syncing().close_store()

        kinds = {type(event) for event in history}
        assert {events.ReindexRequired, events.FileChanged, events.FileDeleted} <= kinds
        assert events.SessionGrew in kinds
        assert handled > 0
        assert snapshot(store_file(tmp_path / "replay")) == original
