"""An index built before notes' chunks carried their heading trail (chunker version 2) is
rebuilt at the next sync, and only the chunks that gain a trail reach the model again."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import sqlean

from memlane.application import indexing, wanted_meta
from memlane.domain import chunking
from memlane.domain.chunks import Chunk
from memlane.domain.hashing import sha256_text
from memlane.domain.heading_trail import indexed_text
from memlane.entrypoints.api import open_manager

pytestmark = pytest.mark.integration

CONFIG = {"provider": "local"}
SENTENCE = "The cohort study followed patients treated with statins for ten years. "


def _sync(tmp_path: Path) -> tuple[bool, str, tuple[int, int], int]:
    with open_manager(
        workspace=tmp_path / "ws", state_dir=tmp_path / "state", agent_id="main", config=CONFIG,
        env={"HOME": str(tmp_path)},
    ) as manager:  # fmt: skip
        report = manager.sync()
    return (
        report.full_reindex,
        report.reason,
        (report.chunks_embedded, report.vectors_backfilled),
        0 if report.vectors is None else report.vectors.done,
    )


def _rows(tmp_path: Path) -> list[tuple[str, str, str, bytes | None]]:
    conn = sqlean.connect(str(tmp_path / "state" / "agents" / "main" / "memory.db"))
    try:
        return [
            (str(c), str(t), str(h), e)
            for c, t, h, e in conn.execute(
                "SELECT context, text, hash, embedding FROM chunks ORDER BY path, start_line"
            )
        ]
    finally:
        conn.close()


def _without_trail(chunk_text: Callable[..., list[Chunk]]) -> Callable[..., list[Chunk]]:
    def old_chunk_text(*args: Any, **kwargs: Any) -> list[Chunk]:
        return chunk_text(*args, **{**kwargs, "heading_context": False})

    return old_chunk_text


def test_an_old_index_is_rebuilt_and_only_trailed_chunks_are_embedded_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = tmp_path / "ws" / "memory"
    memory.mkdir(parents=True)
    body = "\n".join(SENTENCE * 3 for _ in range(40))  # ~8,600 characters: several chunks
    (memory / "statins.md").write_text(f"# Statins and memory\n\n{body}\n", encoding="utf-8")
    (tmp_path / "ws" / "MEMORY.md").write_text("no heading here\n", encoding="utf-8")

    # The previous release: chunker version 2, notes chunked without their trail.
    with monkeypatch.context() as old:
        old.setattr(wanted_meta, "CHUNKER_VERSION", 2)
        old.setattr(indexing, "chunk_text", _without_trail(chunking.chunk_text))
        first = _sync(tmp_path)
    before = _rows(tmp_path)
    upgraded = _sync(tmp_path)
    after = _rows(tmp_path)
    again = _sync(tmp_path)

    trailed = [r for r in after if r[0]]
    assert first[0] is True and first[3] == len(before)
    assert all(context == "" for context, _, _, _ in before)
    assert upgraded[0] is True  # a full reindex: the stored chunker version is older
    # Same texts and lines; the chunks after the title now carry it, and only they were embedded.
    assert [r[1] for r in after] == [r[1] for r in before]
    assert {r[0] for r in trailed} == {"# Statins and memory"}
    assert len(trailed) == len(after) - 2  # all but the title's chunk and MEMORY.md's
    # The rebuild writes the cached vectors at once; the backfill embeds the rest.
    assert upgraded[2][1] == len(trailed)
    assert upgraded[3] == len(after)  # every chunk has its vector
    for context, text, digest, _ in after:
        assert digest == sha256_text(indexed_text(context, text))
    kept = {r[1]: r[3] for r in before}
    for context, text, _, vector in after:
        assert (vector == kept[text]) is (context == "")
    assert again[0] is False and again[2] == (0, 0)  # nothing left to do
