"""An index made before note chunks had piece vectors gains them at its next sync, with the
bundled model, without embedding any chunk again; transcripts get none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sqlean

from memlane.entrypoints.api import open_manager

pytestmark = pytest.mark.integration


def _open(tmp_path: Path, config: dict[str, Any]) -> Any:
    return open_manager(
        workspace=tmp_path / "ws", state_dir=tmp_path / "state", agent_id="main", config=config,
        env={"HOME": str(tmp_path)},
    )  # fmt: skip


def _db(tmp_path: Path) -> sqlean.Connection:
    return sqlean.connect(str(tmp_path / "state" / "agents" / "main" / "memory.db"))


def _embeddings(tmp_path: Path) -> dict[str, bytes]:
    conn = _db(tmp_path)
    try:
        return {str(i): bytes(e) for i, e in conn.execute("SELECT id, embedding FROM chunks")}
    finally:
        conn.close()


def _pieces(tmp_path: Path) -> dict[str, tuple[str, int]]:
    conn = _db(tmp_path)
    try:
        rows = conn.execute(
            "SELECT c.source, p.chunk_id, p.pieces FROM chunk_pieces p JOIN chunks c "
            "ON c.id = p.chunk_id"
        )
        return {str(cid): (str(source), int(n)) for source, cid, n in rows}
    finally:
        conn.close()


def test_an_index_without_pieces_gains_them_and_keeps_every_vector(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "retries.md").write_text(
        "# Retry policy\n\nThe ingest job retries five times with exponential backoff.\n"
        "Payments never retry: a second charge costs more than a failed one.\n",
        encoding="utf-8",
    )
    sessions = tmp_path / "state" / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    line = {"type": "message", "message": {"role": "user", "content": "what is the retry limit?"}}
    (sessions / "chat.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")

    with _open(tmp_path, {"provider": "local", "query": {"pieceWeight": 0}}) as manager:
        manager.sync()
    before = _embeddings(tmp_path)
    assert _pieces(tmp_path) == {}  # pieceWeight 0: no piece is embedded

    with _open(tmp_path, {"provider": "local"}) as manager:
        report = manager.sync()
        found = manager.search("how often does the ingest job retry?")

    assert report.chunks_embedded == 0
    assert _embeddings(tmp_path) == before  # every chunk kept its vector, byte for byte
    pieces = _pieces(tmp_path)
    assert {source for source, _ in pieces.values()} == {"memory"}
    assert sum(n for _, n in pieces.values()) == 3  # the heading and the two lines
    assert not [w for w in found.warnings if "piece" in w]
    assert found.results[0].path == "memory/retries.md"
