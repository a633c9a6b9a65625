"""Writes a unit's files where memlane looks for them, and estimates what indexing will cost.

Layout per unit: `<root>/workspace/memory/docs/<file>.md` (notes are memory files) and
`<root>/state/agents/<agent>/sessions/<file>.jsonl` (the agent's transcript folder). Files are
only rewritten when their content changed, so a re-run's sync sees nothing new.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from memlane.bench.datasets.model import Unit

AGENT_ID = "bench"
# memlane's defaults: chunks of 400 tokens * 4 chars with 80 tokens * 4 chars of overlap.
CHUNK_CHARS = 1600
OVERLAP_CHARS = 320


@dataclass(frozen=True, slots=True)
class UnitPaths:
    root: Path

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def state_dir(self) -> Path:
        return self.root / "state"

    @property
    def notes_dir(self) -> Path:
        return self.workspace / "memory" / "docs"

    @property
    def sessions_dir(self) -> Path:
        return self.state_dir / "agents" / AGENT_ID / "sessions"

    @classmethod
    def for_unit(cls, work_dir: Path, dataset: str, unit_id: str) -> UnitPaths:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in unit_id)
        # Absolute: the store path goes into the unit's config, where a relative path is read
        # against the state dir (as the reference reads it), not against the current directory.
        return cls(work_dir.resolve() / dataset / safe)

    def store_path(self, store_key: str) -> Path:
        return self.state_dir / "memory" / f"{AGENT_ID}-{store_key}.sqlite"


@dataclass(frozen=True, slots=True)
class WriteStats:
    files: int
    written: int
    removed: int


def materialize(unit: Unit, paths: UnitPaths) -> WriteStats:
    """Write the unit's files (skipping unchanged ones) and remove files the unit no longer has."""
    paths.notes_dir.mkdir(parents=True, exist_ok=True)
    paths.sessions_dir.mkdir(parents=True, exist_ok=True)
    wanted: dict[Path, str] = {}
    for f in unit.files:
        folder = paths.notes_dir if f.kind == "note" else paths.sessions_dir
        wanted[folder / f.name] = f.text
    written = 0
    for target, text in wanted.items():
        data = text.encode("utf-8")
        if target.exists() and target.read_bytes() == data:
            continue
        target.write_bytes(data)
        written += 1
    removed = 0
    for folder in (paths.notes_dir, paths.sessions_dir):
        for existing in folder.iterdir():
            if existing.is_file() and existing not in wanted:
                existing.unlink()
                removed += 1
    return WriteStats(files=len(wanted), written=written, removed=removed)


def indexed_chars(unit: Unit) -> list[int]:
    """Per file, the characters memlane will index (transcripts: `Role: text` lines only)."""
    sizes: list[int] = []
    for f in unit.files:
        if f.kind == "note":
            sizes.append(len(f.text))
            continue
        total = 0
        for line in f.text.split("\n"):
            if not line:
                continue
            msg = json.loads(line)["message"]
            total += len(str(msg["content"])) + len(str(msg["role"])) + 3
        sizes.append(total)
    return sizes


def estimated_chunks(sizes: list[int]) -> int:
    """Chunks memlane's default line chunker makes, roughly: a window of 1600 chars, step 1280."""
    step = CHUNK_CHARS - OVERLAP_CHARS
    return sum(max(1, math.ceil(max(0, n - OVERLAP_CHARS) / step)) for n in sizes)
