"""Benchmark: `memlane search` end to end in a fresh process, on a store of 100k or 1M chunks.

The store is a copy of one kept by `bench/store_bench.py --keep DIR` (synthetic text and
vectors), made searchable by the CLI with the bundled model: its chunks are relabelled with the
model's id and it gets the IndexMeta of a one-note workspace indexed by the real CLI (so the CLI
accepts it as its own index); the workspace gets a stub per synthetic file with the size and
mtime of its `files` row, so the sync the CLI runs before each search finds nothing to do
(background syncs are off). No sqlite-vec: the bulk store has no vec0 mirror, the code file
serves the vector leg.
The first search (it builds the code file) is not timed. Then, alternately, each in a fresh
process: the whole `memlane search --json`, and the bundled model alone (load, then one query
embedding), so the CLI's time splits into model load + query embedding + the rest (imports,
config, store open, both legs, output).

    .venv/bin/python bench/cli_cold_start.py --store bench/work/stores/100000 \
        --work bench/work/cli-100k --rounds 5 --out cli_cold_start_100k

Writes bench/results/<out>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

_QUERY = "w17 certificate renewal w4242"
_CONFIG = """{ agents: { defaults: { memorySearch: {
  sync: { onSearch: false, watch: false, onSessionStart: false },
  store: { path: "%s", vector: { enabled: false } } } } } }"""
_MODEL_ONLY = """
import time
t0 = time.perf_counter()
from memlane.adapters.embedding.local import LocalEmbeddingProvider
p = LocalEmbeddingProvider()
t1 = time.perf_counter()
p.embed_query("%s")
t2 = time.perf_counter()
print(round((t1 - t0) * 1000, 1), round((t2 - t1) * 1000, 1))
"""


def _memlane(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cli = Path(sys.executable).parent / "memlane"
    return subprocess.run(
        [str(cli), "--config", str(work / "config.json5"), "--state-dir", str(work / "state"),
         "--workspace", str(work / "ws"), *args],
        capture_output=True, text=True, check=True,
    )  # fmt: skip


def _prepare(store: Path, work: Path) -> None:
    """Copy the store, index a one-note workspace with the real CLI, adopt its meta and model."""
    from memlane.adapters.store import meta_table
    from memlane.adapters.store.database import SqliteDatabase
    from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
    from memlane.domain.index_meta import index_meta_to_json

    (work / "ws" / "memory").mkdir(parents=True, exist_ok=True)
    (work / "ws" / "memory" / "note.md").write_text("# Note\n\nThe w17 certificate renews.\n")
    (work / "config.json5").write_text(_CONFIG % (work / "tiny.db"))
    _memlane(work, "index")
    tiny = SqliteIndexStore.open(work / "tiny.db")
    meta = tiny.meta()
    with tiny.database.read() as conn:  # the vectors' model key (model id and its file's hash)
        model = str(conn.exec_driver_sql("SELECT model FROM chunks LIMIT 1").scalar_one())
    tiny.close()
    assert meta is not None, "the CLI wrote no IndexMeta"
    assert meta.dimensions == 384, meta
    target = work / "index.db"
    shutil.copy(store / "index.db", target)
    database = SqliteDatabase.open(target, load_vector=False)

    def adopt(conn: Any) -> None:
        conn.exec_driver_sql("UPDATE chunks SET model = ?", (model,))
        meta_table.put(conn, meta_table.INDEX_META_KEY, index_meta_to_json(meta))
        meta_table.bump_generation(conn)

    database.write(adopt)
    # The CLI syncs before each search: give it a workspace whose files' stats match their
    # `files` rows (size and mtime), so its stat-first scan finds nothing to do (their content
    # is never read) and the synthetic chunks stay.
    with database.read() as conn:
        listed = conn.exec_driver_sql("SELECT path, size, mtime FROM files").all()
    database.close()
    for path, size, mtime in listed:
        stub = work / "ws" / str(path)
        if stub.name == "note.md":
            continue
        stub.parent.mkdir(parents=True, exist_ok=True)
        stub.write_bytes(b"x" * int(size))
        os.utime(stub, (float(mtime), float(mtime)))
    (work / "config.json5").write_text(_CONFIG % target)


def _pct(samples: list[float]) -> dict[str, float]:
    return {"median_ms": round(statistics.median(samples), 1), "min_ms": round(min(samples), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default="cli_cold_start")
    args = parser.parse_args()
    work = args.work.resolve()
    if not (work / "index.db").exists():
        _prepare(args.store.resolve(), work)
    first = _memlane(work, "search", _QUERY, "--json")  # builds the code file: not timed
    hits = json.loads(first.stdout)["results"]
    cli: list[float] = []
    load: list[float] = []
    embed: list[float] = []
    for _ in range(args.rounds):
        t = time.perf_counter()
        done = _memlane(work, "search", _QUERY, "--json")
        cli.append((time.perf_counter() - t) * 1000)
        assert json.loads(done.stdout)["results"], done.stdout
        model = subprocess.run(
            [sys.executable, "-c", _MODEL_ONLY % _QUERY], capture_output=True, text=True, check=True
        )
        a, b = model.stdout.split()
        load.append(float(a))
        embed.append(float(b))
    result = {
        "store": str(args.store),
        "chunks": json.loads((args.store / "build.json").read_text())["chunks"],
        "query": _QUERY,
        "first_results": len(hits),
        "status_vector_index": json.loads(_memlane(work, "status", "--json").stdout)["vectorIndex"],
        "cli_search_ms": _pct(cli),
        "model_load_ms": _pct(load),
        "query_embedding_ms": _pct(embed),
        "rest_ms_median": round(
            statistics.median(cli) - statistics.median(load) - statistics.median(embed), 1
        ),
        "samples": {"cli": cli, "model_load": load, "query_embedding": embed},
    }
    target = Path(__file__).parent / "results" / f"{args.out}.json"
    target.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "samples"}, indent=2))
    print(f"written {target}")


if __name__ == "__main__":
    main()
