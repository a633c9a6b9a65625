"""Benchmark: what a search pays for `vector_progress` while vectors are missing (issue #18).

Every search asks the store how far the vectors of the active model are (the warning
`vectors 12,345 / 100,000 (12 %)`). Counted from scratch (the code before the count was kept
per database state), that is an index range scan over every chunk still missing a vector.
This bench runs on a COPY of an index (by default the one `backfill_bench.py synthetic` leaves:
100k chunks, most vectors missing) and times, medians of `--repeat` calls:

  count              the two statements counted from scratch (what every search paid before);
  kept               `SqliteIndexStore.vector_progress` with nothing changed since it counted;
  after own batch    the same right after this store committed a backfill batch (32 vectors):
                     the kept count is carried over the write, nothing is counted;
  after other write  right after another connection committed a batch: counted again, once;
  set_vectors        one batch of 32 with the count carried over, and with none kept (the
                     carry-over's own cost: counting the 32 rows' old models).

    nice .venv/bin/python -m memlane.bench.studies.progress_count_bench \\
        [--db bench/work/backfill/synthetic-100000/state/agents/bench/memory.db]

Prints a table and writes bench/results/progress_count_bench.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memlane.adapters.store.database import SqliteDatabase
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.adapters.store.vector_progress import vector_progress
from memlane.domain.chunks import ChunkId

DEFAULT_DB = (
    Path(__file__).parent.parent / "work/backfill/synthetic-100000/state/agents/bench/memory.db"
)
RESULTS = Path(__file__).parent.parent / "results"
BATCH = 32


def _ms(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return (time.perf_counter() - started) * 1000


def _median(samples: list[float]) -> float:
    return round(statistics.median(samples), 3)


def _copy(db: Path, into: Path) -> Path:
    """A consistent copy through SQLite's backup API (the source may have a live WAL)."""
    target = into / "memory.db"
    src = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    dst = sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    return target


def _model_and_dims(db: Path) -> tuple[str, int]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        row = conn.execute(
            "SELECT model, length(embedding) / 4 FROM chunks WHERE embedding IS NOT NULL LIMIT 1"
        ).fetchone()
    finally:
        conn.close()
    if row is None:
        raise SystemExit(f"{db}: no vector yet; run the backfill for a few batches first")
    return str(row[0]), int(row[1])


def _batch(
    store: SqliteIndexStore, model: str, dims: int, rng: random.Random
) -> dict[ChunkId, list[float]]:
    missing = store.chunks_without_vectors(model, BATCH)
    return {c.id: [rng.uniform(-1, 1) for _ in range(dims)] for c in missing}


def run(db: Path, repeat: int) -> dict[str, Any]:
    model, dims = _model_and_dims(db)
    rng = random.Random(18)
    with tempfile.TemporaryDirectory(dir=db.parent.parent) as tmp:
        path = _copy(db, Path(tmp))
        store = SqliteIndexStore(SqliteDatabase.open(path))
        other = SqliteIndexStore(SqliteDatabase.open(path))
        try:
            start = store.vector_progress(model)

            def count() -> object:
                with store.database.read() as conn:
                    return vector_progress(conn, model)

            counted = [_ms(count) for _ in range(repeat)]
            kept = [_ms(lambda: store.vector_progress(model)) for _ in range(repeat)]
            # Alternated, so the machine's drift hits both alike.
            after_own, carried_writes, plain_writes = [], [], []
            for _ in range(repeat):
                own = _batch(store, model, dims, rng)
                carried_writes.append(_ms(lambda: store.set_vectors(model, own)))  # noqa: B023
                after_own.append(_ms(lambda: store.vector_progress(model)))
                plain = _batch(store, model, dims, rng)
                store.invalidate_caches()  # nothing kept: the write carries nothing over
                plain_writes.append(_ms(lambda: store.set_vectors(model, plain)))  # noqa: B023
                store.vector_progress(model)  # counted again, kept for the next round
            after_other = []
            for _ in range(repeat):
                other.set_vectors(model, _batch(other, model, dims, rng))
                after_other.append(_ms(lambda: store.vector_progress(model)))
            end = store.vector_progress(model)
            with store.database.read() as conn:
                assert end == vector_progress(conn, model), "the kept count drifted"
        finally:
            store.close()
            other.close()
            shutil.rmtree(Path(tmp), ignore_errors=True)
    return {
        "db": str(db),
        "chunks": start.total,
        "vectors_at_start": start.done,
        "repeat": repeat,
        "count_ms": _median(counted),
        "kept_ms": _median(kept),
        "after_own_batch_ms": _median(after_own),
        "after_other_write_ms": _median(after_other),
        "set_vectors_carried_ms": _median(carried_writes),
        "set_vectors_nothing_kept_ms": _median(plain_writes),
        "load_average": os.getloadavg(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, default=DEFAULT_DB)
    parser.add_argument("--repeat", type=int, default=21)
    args = parser.parse_args()
    doc = run(args.db, args.repeat)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / "progress_count_bench.json"
    out.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"{doc['chunks']:,} chunks, {doc['vectors_at_start']:,} with a vector (load "
          f"{doc['load_average'][0]:.1f}); medians of {doc['repeat']}, ms")  # fmt: skip
    for key in ("count_ms", "kept_ms", "after_own_batch_ms", "after_other_write_ms",
                "set_vectors_carried_ms", "set_vectors_nothing_kept_ms"):  # fmt: skip
        print(f"  {key:30} {doc[key]:>10.3f}")
    print(f"  -> {out}")


if __name__ == "__main__":
    main()
