"""Benchmark: sync speed of the real pipeline (real files, real SQLite store, real container).

Measures, for N notes (default 10,000), with a deterministic in-process embedder so the figures
show memlane's own cost rather than a model's:
  * the initial index (files/s, chunks/s),
  * a no-op sync (nothing changed; the limit it is compared with: stat-ing every file),
  * a sync after one edit (the limit: reading and hashing that one file),
  * the watcher latency: from a saved file to a searchable chunk, through the real watcher and
    background syncer (keyword-only provider "none", so no model time is in the figure;
    sync-on-search off, so polling `search` does not itself trigger syncs).

Run:  .venv/bin/python bench/sync_bench.py [--notes 10000] [--repeat 5] [--latency-edits 20]
      .venv/bin/python bench/sync_bench.py --latency-only   # just the watcher latency
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

from dependency_injector import providers

from memlane.application.embedding_runtime import EmbeddingRuntime, Selection
from memlane.application.memory import MemoryManager
from memlane.entrypoints.config.runtime import resolve_runtime
from memlane.entrypoints.container import Container

WORDS = [
    "deploy",
    "cluster",
    "billing",
    "schema",
    "migration",
    "index",
    "vector",
    "keyword",
    "session",
    "note",
    "meeting",
    "decision",
    "todo",
    "review",
    "latency",
    "budget",
    "release",
    "rollback",
    "incident",
    "owner",
    "backlog",
    "sprint",
]


class HashingEmbedder:
    """A cheap deterministic embedder (hashed bag of words), 384 dimensions."""

    id = "bench"
    model = "hashing-384"
    dimensions = 384
    max_input_tokens = 8192
    key = "bench-hashing-384"

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def _vector(self, text: str) -> list[float]:
        vec = [0.0] * self.dimensions
        for word in text.lower().split():
            digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
            vec[int.from_bytes(digest, "little") % self.dimensions] += 1.0
        norm = math.sqrt(sum(x * x for x in vec)) or 1.0
        return [x / norm for x in vec]


def write_notes(workspace: Path, count: int) -> list[Path]:
    paths = []
    for i in range(count):
        folder = workspace / "memory" / f"area-{i % 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        body = " ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(60))
        path = folder / f"note-{i:05d}.md"
        path.write_text(f"# Note {i}\n\n{body}\n\nOwner: person-{i % 37}.\n", encoding="utf-8")
        paths.append(path)
    return paths


def open_manager(root: Path, flags: dict[str, object] | None = None) -> MemoryManager:
    env = {"HOME": str(root)}
    runtime = resolve_runtime(
        env=env,
        cwd=root,
        workspace=str(root / "ws"),
        state=str(root / "state"),
        flags=flags or {"sources": ["memory"], "sync.watch": False},
    )
    runtime.store_path.parent.mkdir(parents=True, exist_ok=True)
    container = Container(runtime_config=runtime, env=env)
    embedder = HashingEmbedder()
    container.embedding_runtime.override(
        providers.Object(EmbeddingRuntime(lambda: Selection(provider=embedder)))
    )
    manager: MemoryManager = container.manager()
    return manager


def timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def _read_and_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def stat_all(paths: list[Path]) -> None:
    for p in paths:
        os.stat(p)


def watch_latency(root: Path, *, notes: int, edits: int, debounce_ms: int) -> list[float]:
    """Seconds from writing a note to the first search that finds the written word, per edit."""
    paths = write_notes(root / "ws", notes)
    env = {"HOME": str(root)}
    flags: dict[str, object] = {
        "sources": ["memory"],
        "provider": "none",
        "sync.watchDebounceMs": debounce_ms,
        "sync.onSearch": False,
        "sync.onSessionStart": False,
    }
    runtime = resolve_runtime(
        env=env, cwd=root, workspace=str(root / "ws"), state=str(root / "state"), flags=flags
    )
    runtime.store_path.parent.mkdir(parents=True, exist_ok=True)
    manager: MemoryManager = Container(runtime_config=runtime, env=env).manager()
    manager.sync()
    manager.start(watch=True)
    time.sleep(0.5)  # let the observer settle before the first edit
    latencies = []
    try:
        for i in range(edits):
            target = paths[(i * 37) % len(paths)]
            word = f"zqxmarker{i:03d}"
            started = time.perf_counter()
            target.write_text(target.read_text() + f"\nEdit {i}: {word}.\n")
            deadline = started + 30
            while time.perf_counter() < deadline:
                if manager.search(word, min_score=0.0).results:
                    break
                time.sleep(0.005)
            else:
                raise RuntimeError(f"edit {i} not searchable after 30 s")
            latencies.append(time.perf_counter() - started)
            time.sleep(0.2)  # let the watcher see a quiet period between edits
    finally:
        manager.close()
    return latencies


def p95(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]


# Measured with this script at cc58a68, before one debouncer: the watcher waited for a quiet
# `watchDebounceMs`, then the scheduler waited the same again (200 notes, 20 edits, 1500 ms).
LATENCY_BEFORE_ONE_DEBOUNCER = {
    "commit": "cc58a68",
    "median_s": 3.109,
    "p95_s": 3.191,
    "max_s": 3.249,
    "note": "watcher and scheduler each debounced by watchDebounceMs: a change waited twice",
}


def latency_result(
    latencies: Sequence[float], *, notes: int, debounce_ms: int
) -> dict[str, object]:
    return {
        "what": "saved file -> searchable chunk, real watcher + background syncer",
        "provider": "none (keyword-only)",
        "notes": notes,
        "edits": len(latencies),
        "watch_debounce_ms": debounce_ms,
        "median_s": round(statistics.median(latencies), 3),
        "p95_s": round(p95(latencies), 3),
        "max_s": round(max(latencies), 3),
        "before_one_debouncer": LATENCY_BEFORE_ONE_DEBOUNCER,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", default="bench/results/sync_bench.json")
    parser.add_argument("--latency-edits", type=int, default=20)
    parser.add_argument("--latency-notes", type=int, default=200)
    parser.add_argument("--debounce-ms", type=int, default=1500, help="sync.watchDebounceMs")
    parser.add_argument("--latency-only", action="store_true")
    args = parser.parse_args()

    latency_root = Path(tempfile.mkdtemp(prefix="memlane-latency-bench-"))
    try:
        latencies = watch_latency(
            latency_root,
            notes=args.latency_notes,
            edits=args.latency_edits,
            debounce_ms=args.debounce_ms,
        )
    finally:
        shutil.rmtree(latency_root, ignore_errors=True)
    latency = latency_result(latencies, notes=args.latency_notes, debounce_ms=args.debounce_ms)
    print(
        f"watcher latency ({latency['edits']} edits, debounce {args.debounce_ms} ms): "
        f"median {latency['median_s']} s, p95 {latency['p95_s']} s"
    )
    if args.latency_only:
        print(json.dumps(latency, indent=2))
        return

    root = Path(tempfile.mkdtemp(prefix="memlane-sync-bench-"))
    try:
        paths = write_notes(root / "ws", args.notes)
        manager = open_manager(root)
        started = time.perf_counter()
        report = manager.sync()
        initial = time.perf_counter() - started
        chunks = manager.status().chunks

        noop = [timed(manager.sync) for _ in range(args.repeat)]
        stat_limit = [timed(lambda: stat_all(paths)) for _ in range(args.repeat)]

        started = time.perf_counter()
        forced = manager.sync(force=True)
        forced_s = time.perf_counter() - started

        edits, read_limit = [], []
        for i in range(args.repeat):
            target = paths[(i * 997) % len(paths)]
            target.write_text(target.read_text() + f"\nEdit {i}: renamed the rollout owner.\n")
            edits.append(timed(manager.sync))
            read_limit.append(timed(partial(_read_and_hash, target)))
        manager.close()
        size = sum(f.stat().st_size for f in (root / "state").rglob("memory.db*"))
    finally:
        shutil.rmtree(root, ignore_errors=True)

    result = {
        "notes": args.notes,
        "chunks": chunks,
        "files_indexed": report.files_indexed,
        "initial_s": round(initial, 3),
        "initial_files_per_s": round(args.notes / initial, 1),
        "initial_chunks_per_s": round(chunks / initial, 1),
        "noop_sync_s_median": round(statistics.median(noop), 4),
        "noop_limit_stat_all_s_median": round(statistics.median(stat_limit), 4),
        "one_edit_sync_s_median": round(statistics.median(edits), 4),
        "one_edit_limit_read_hash_s_median": round(statistics.median(read_limit), 5),
        "forced_reindex_s": round(forced_s, 3),
        "forced_reindex_chunks_embedded": forced.chunks_embedded,
        "db_bytes": size,
        "cpus": os.cpu_count(),
        "watch_latency": latency,
    }
    rows = [
        (
            "initial index",
            f"{result['initial_s']} s",
            f"{result['initial_files_per_s']} files/s, {result['initial_chunks_per_s']} chunks/s",
        ),
        (
            "no-op sync (median)",
            f"{result['noop_sync_s_median']} s",
            f"limit: stat every file {result['noop_limit_stat_all_s_median']} s",
        ),
        (
            "one-edit sync (median)",
            f"{result['one_edit_sync_s_median']} s",
            f"limit: read+hash the file {result['one_edit_limit_read_hash_s_median']} s",
        ),
        (
            "forced full reindex",
            f"{result['forced_reindex_s']} s",
            f"{forced.chunks_embedded} chunks embedded (all others from the cache)",
        ),
        ("database size", f"{size / 1e6:.1f} MB", f"{size / max(1, chunks):.0f} bytes/chunk"),
    ]
    print(f"sync benchmark: {args.notes} notes, {chunks} chunks, fake 384-d embedder")
    for name, value, note in rows:
        print(f"  {name:<24} {value:>12}   {note}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
