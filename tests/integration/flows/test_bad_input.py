"""Bad files on disk are reported and never stop a sync (real files, real store, real sources)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memlane.entrypoints.api import open_manager

pytestmark = pytest.mark.integration


def test_bad_files_are_reported_and_the_good_ones_indexed(tmp_path: Path) -> None:
    """Binary, invalid UTF-8, 50 MB, symlink loop, broken transcript lines: all survive a sync."""
    ws = tmp_path / "ws"
    memory = ws / "memory"
    memory.mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Notes\n\nThe good note mentions the walrus protocol.\n")
    (memory / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(200))
    (memory / "latin1.md").write_bytes(
        "# Café\n\nla réunion du walrus à Genève\n".encode("latin-1")
    )
    with (memory / "huge.md").open("wb") as f:  # sparse: 50 MB without writing them
        f.truncate(50 * 1024 * 1024)
    (memory / "loop").mkdir()
    os.symlink(memory / "loop", memory / "loop" / "again")
    os.symlink(tmp_path, memory / "escape")  # points outside every allowed root
    (memory / "odd name ü\n.md").write_text("walrus in an oddly named file\n")
    sessions = tmp_path / "state" / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    good = json.dumps({"type": "message", "message": {"role": "user", "content": "walrus call"}})
    latin = {"type": "message", "message": {"role": "user", "content": "caf\u00e9 narwhal"}}
    (sessions / "chat.jsonl").write_bytes(
        good.encode()
        + b"\n{broken json\n\xff\xfe\xfd\n"
        + json.dumps(latin, ensure_ascii=False).encode("latin-1")  # one invalid UTF-8 byte
        + b"\n"
        + good.encode()[:20]
    )

    manager = open_manager(
        workspace=ws,
        state_dir=tmp_path / "state",
        config={"provider": "none", "query": {"minScore": 0}},
        env={"HOME": str(tmp_path)},
    )
    report = manager.sync()
    found = {r.path for r in manager.search("walrus", max_results=10).results}
    narwhal = [r.path for r in manager.search("narwhal").results]
    issues = {i.path: i.reason for i in manager.status().issues}
    manager.close()

    assert {
        "MEMORY.md",
        "memory/latin1.md",
        "memory/odd name ü\n.md",
        "sessions/chat.jsonl",
    } <= found
    assert "memory/binary.md" in issues and "binary" in issues["memory/binary.md"]
    assert "memory/huge.md" in issues
    assert "invalid UTF-8" in issues["memory/latin1.md"]
    assert "3 transcript line(s) skipped (line 2: malformed JSON; " in issues["sessions/chat.jsonl"]
    assert "invalid UTF-8: 1 byte(s) replaced" in issues["sessions/chat.jsonl"]
    assert narwhal == ["sessions/chat.jsonl"]  # the message with the bad byte was kept
    assert any("escape" in path for path in issues)
    assert report.files_indexed >= 4
