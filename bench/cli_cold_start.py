"""Benchmark: `memlane search` end to end in a fresh process, on a store of 100k or 1M chunks.

The store is a copy of one kept by `bench/store_bench.py --keep DIR` (synthetic text and
vectors), made searchable by the CLI with the bundled model: its chunks are relabelled with the
model's id and it gets the IndexMeta of a one-note workspace indexed by the real CLI (so the CLI
accepts it as its own index); the workspace gets a stub per synthetic file with the size and
mtime of its `files` row, so the sync the CLI runs before each search (`sync.onSearch`, on by
default; `--on-search false` turns it off) finds nothing to do but its stat scan (background
syncs are off). No sqlite-vec: the bulk store has no vec0 mirror, the code file
serves the vector leg.
The first search (it builds the code file) is not timed. Then, alternately, each in a fresh
process: the whole `memlane search --json`, and the bundled model alone (load, then one query
embedding). That second process also imports memlane and numpy before building the model, so
its "model load" is mostly imports (the constructor itself took 40 ms at 1M); `--phases` gives
the real split. With `--phases`, each round also runs
`bench/cli_phases.py`: the same search through the CLI's own objects in a fresh process, each
step timed (interpreter start, imports, config, manager open, sync, model load, query embedding,
each leg, output), so the end-to-end figure splits by where a fresh process spends its time.

    .venv/bin/python bench/cli_cold_start.py --store bench/work/stores/100000 \
        --work bench/work/cli-100k --rounds 5 --out cli_cold_start_100k
    .venv/bin/python bench/cli_cold_start.py --store bench/work/stores/1000000 \
        --work bench/work/cli-1m --rounds 5 --phases --out cli_cold_start_1m

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
  sync: { onSearch: %s, watch: false, onSessionStart: false },
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


def _memlane(
    work: Path, *args: str, python: str = sys.executable
) -> subprocess.CompletedProcess[str]:
    cli = Path(python).parent / "memlane"
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
    (work / "config.json5").write_text(_CONFIG % ("false", work / "tiny.db"))
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
    codes = store / "index.db.vcodes"
    if codes.exists():  # its header decides whether the first search reuses it or rebuilds
        shutil.copy(codes, work / "index.db.vcodes")
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


def _start_watcher(work: Path) -> subprocess.Popen[bytes]:
    """`memlane watch` on the workspace, returned once its lease says every change is indexed."""
    from memlane.adapters.sources.watch_lease import FileWatchLease

    cli = Path(sys.executable).parent / "memlane"
    watcher = subprocess.Popen(
        [str(cli), "--config", str(work / "config.json5"), "--state-dir", str(work / "state"),
         "--workspace", str(work / "ws"), "watch"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    lease = FileWatchLease(str(work / "state" / "agents" / "main" / "watch.lease"))
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        holder = lease.holder()
        if holder is not None and holder.fresh:
            return watcher
        assert watcher.poll() is None, "memlane watch ended"
        time.sleep(0.5)
    raise SystemExit("memlane watch never said the index was fresh")


def _phases(work: Path, python: str = sys.executable) -> dict[str, float]:
    """One fresh process running the CLI's search step by step (bench/cli_phases.py)."""
    script = Path(__file__).parent / "cli_phases.py"
    args = [str(work / "config.json5"), str(work / "state"), str(work / "ws"), _QUERY]
    spawned = time.monotonic()  # one clock for every process (Linux)
    done = subprocess.run(
        [python, str(script), repr(spawned), *args],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    ended = time.monotonic()
    assert json.loads(done.stdout)["results"], done.stdout
    line = next(x for x in done.stderr.splitlines() if x.startswith("phases "))
    ms: dict[str, float] = json.loads(line.removeprefix("phases "))
    ms["exit"] = round(ended * 1000 - ms.pop("ended_clock_ms"), 1)
    ms["total"] = round((ended - spawned) * 1000, 1)
    return ms


def _medians(runs: list[dict[str, float]]) -> dict[str, float]:
    keys = sorted({k for p in runs for k in p})
    return {k: round(statistics.median(p.get(k, 0.0) for p in runs), 1) for k in keys}


def _pct(samples: list[float]) -> dict[str, float]:
    return {"median_ms": round(statistics.median(samples), 1), "min_ms": round(min(samples), 1)}


def main() -> None:
    # Every child inherits this environment: without .pyc files (PYTHONDONTWRITEBYTECODE, set in
    # some agent shells) each fresh process would compile memlane's modules from source.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default="cli_cold_start")
    parser.add_argument("--phases", action="store_true", help="also time the steps (see above)")
    parser.add_argument(
        "--on-search",
        choices=["true", "false"],
        default="true",
        help="sync.onSearch: true (the default) scans the workspace before each search; false "
        "searches the index as it is (a checkout older than session 8 scans either way)",
    )
    parser.add_argument(
        "--watcher",
        action="store_true",
        help="run `memlane watch` (this checkout) on the workspace during the rounds: its lease "
        "lets a search skip the scan once every change is indexed",
    )
    parser.add_argument(
        "--baseline",
        help="another checkout's venv python (e.g. /work/main/.venv/bin/python): its CLI and "
        "steps are run too, alternately with this one's, on the same workspace",
    )
    args = parser.parse_args()
    work = args.work.resolve()
    if not (work / "index.db").exists():
        _prepare(args.store.resolve(), work)
    (work / "config.json5").write_text(_CONFIG % (args.on_search, work / "index.db"))
    first = _memlane(work, "search", _QUERY, "--json")  # builds the code file: not timed
    watcher = _start_watcher(work) if args.watcher else None
    load_before = [round(x, 2) for x in os.getloadavg()]
    hits = json.loads(first.stdout)["results"]
    cli: list[float] = []
    load: list[float] = []
    embed: list[float] = []
    phases: list[dict[str, float]] = []
    base_cli: list[float] = []
    base_phases: list[dict[str, float]] = []
    for n in range(args.rounds):
        # Which checkout goes first alternates by round, so neither always finds a warmer cache.
        pythons = [sys.executable] + ([args.baseline] if args.baseline else [])
        for python in pythons if n % 2 == 0 else pythons[::-1]:
            t = time.perf_counter()
            done = _memlane(work, "search", _QUERY, "--json", python=python)
            (cli if python == sys.executable else base_cli).append((time.perf_counter() - t) * 1000)
            assert json.loads(done.stdout)["results"], done.stdout
        model = subprocess.run(
            [sys.executable, "-c", _MODEL_ONLY % _QUERY], capture_output=True, text=True, check=True
        )
        a, b = model.stdout.split()
        load.append(float(a))
        embed.append(float(b))
        if args.phases:
            for python in pythons if n % 2 == 0 else pythons[::-1]:
                (phases if python == sys.executable else base_phases).append(_phases(work, python))
    if watcher is not None:
        watcher.terminate()
        watcher.wait(timeout=60)
    result: dict[str, Any] = {
        "store": str(args.store),
        "chunks": json.loads((args.store / "build.json").read_text())["chunks"],
        "query": _QUERY,
        "sync_on_search": args.on_search,
        "watcher_running": args.watcher,
        "workspace_files": sum(len(names) for _, _, names in os.walk(work / "ws")),
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
    if phases:
        result["phases_median_ms"] = _medians(phases)
        result["samples"]["phases"] = phases
    if args.baseline:
        result["baseline"] = {
            "python": args.baseline,
            "cli_search_ms": _pct(base_cli),
            "phases_median_ms": _medians(base_phases) if base_phases else None,
            "samples": {"cli": base_cli, "phases": base_phases},
        }
    result["load_average_1_5_15"] = {
        "before": load_before,
        "after": [round(x, 2) for x in os.getloadavg()],
    }
    target = Path(__file__).parent / "results" / f"{args.out}.json"
    target.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "samples"}, indent=2))
    print(f"written {target}")


if __name__ == "__main__":
    main()
