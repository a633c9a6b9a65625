"""Benchmark: what a new process pays to learn that no note chunk lacks its pieces.

Every search of the CLI without a daemon is a new process, and the first sync or search asks
the store whether note chunks lack piece vectors (`IndexStore.pieces_owed`). Finding none scans
every note chunk. This builds a SQLite store of N note chunks (bench/bulk_writer.py, 384-dim
vectors, every chunk given one piece), then opens it afresh R times and times the question:
the first open scans and records the "none" in the meta table (adapters/piece_walk.py),
the later ones read it. Before session 24 every open paid the first figure.

Session 25 adds the other question every search asks first, how far the vectors are
(`IndexStore.vector_progress`): the first process counts and notes the count
(adapters/progress_notes.py), the later ones read it; beside them, in the same rounds, the bare
count every new process ran before.

    .venv/bin/python bench/pieces_owed_bench.py --chunks 100000 --rounds 5 --out F

Writes bench/results/<F>.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from memlane.adapters.store import vector_progress as progress_counts
from memlane.adapters.store.database import SqliteDatabase
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.application.ports.index_store import IndexedFile
from memlane.bench.bulk_writer import BulkWriter
from memlane.domain.chunks import Chunk, ChunkId, ContentHash

DIMS = 384
MODEL = "bench@pieces"
PER_FILE = 10


def _build(path: Path, size: int) -> None:
    store = SqliteIndexStore.open(path)
    writer = BulkWriter(store, DIMS)
    rng = np.random.default_rng(0)
    for f in range(size // PER_FILE):
        vectors = rng.normal(size=(PER_FILE, DIMS)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        name = f"memory/f{f}.md"
        chunks = [
            (
                Chunk(ChunkId(f"c{f}_{i}"), "memory", name, i * 5 + 1, i * 5 + 5,
                      f"note {f} part {i}", ContentHash(f"h{f}_{i}")),
                vectors[i].tolist(),
                MODEL,
            )
            for i in range(PER_FILE)
        ]  # fmt: skip
        writer.add(chunks, IndexedFile("memory", name, ContentHash(f"f{f}"), 1.0, 100))
    writer.flush()
    piece = [0.0] * (DIMS - 1) + [1.0]
    while todo := store.chunks_without_pieces(MODEL, 2000):
        store.set_pieces(MODEL, {c.id: [piece] for c in todo})
    # One more note, as a sync writes it, and its pieces: the "none" the walk above recorded is
    # of an older state now, so the first process below has to look, as after any sync that
    # wrote something.
    last = Chunk(
        ChunkId("last"), "memory", "memory/last.md", 1, 5, "the last note", ContentHash("l")
    )
    store.replace_file(
        IndexedFile("memory", "memory/last.md", ContentHash("fl"), 1.0, 100), [last], [piece], MODEL
    )
    store.set_pieces(MODEL, {last.id: [piece]})
    store.close()


def run(size: int, rounds: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="memlane-pieces-owed-") as tmp:
        path = Path(tmp) / "index.sqlite"
        _build(path, size)
        owed, progress, counted = [], [], []
        for _ in range(rounds):
            store = SqliteIndexStore.open(path)  # what a new process opens
            started = time.perf_counter()
            assert store.pieces_owed(MODEL, 65) == 0
            owed.append(time.perf_counter() - started)
            started = time.perf_counter()
            store.vector_progress(MODEL)
            progress.append(time.perf_counter() - started)
            store.close()
            # What every new process paid for the vector count before session 25.
            db = SqliteDatabase.open(path)
            started = time.perf_counter()
            with db.read() as conn:
                progress_counts.vector_progress(conn, MODEL)
            counted.append(time.perf_counter() - started)
            db.close()
    return {
        "chunks": size,
        "first_process_ms": round(owed[0] * 1000, 2),
        "later_processes_median_ms": round(statistics.median(owed[1:]) * 1000, 3),
        "all_ms": [round(s * 1000, 3) for s in owed],
        "vector_progress_first_process_ms": round(progress[0] * 1000, 2),
        "vector_progress_later_processes_median_ms": round(
            statistics.median(progress[1:]) * 1000, 3
        ),
        "vector_count_every_process_paid_median_ms": round(statistics.median(counted) * 1000, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default="pieces_owed")
    args = parser.parse_args()
    report = run(args.chunks, max(2, args.rounds))
    out = Path(__file__).resolve().parent / "results" / f"{args.out}.json"
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
