"""Benchmark: N writer and M searcher processes on one PostgreSQL memory for a fixed time.

Each writer is a "host" of its own (own state dir, own workspace) syncing its own agent through
the public API (`open_manager(...).sync()`) in rounds: new notes, an edited note and, every
third round, a deleted note, then a sync. Each searcher opens the shared database like a
read-only host and runs hybrid searches (keyword leg + vector leg + z-score fusion, 24
candidates per leg, as a default search asks) against a random agent, as fast as it can.
At the end every agent's index is compared with its workspace: every file present is indexed
exactly once (one files row, its chunks once, of its latest revision) and no deleted file is
left.

Vectors: `--provider none` is keyword-only. The default embeds through memlane's OpenAI
provider against an OpenAI-compatible embeddings server on 127.0.0.1 started here, which
answers with deterministic unit vectors (SHA-256 of the text seeds a generator), so the HNSW
index and the vector leg are written and read like a real deployment's without the cost of a
model (the bundled model embeds ~2 passages/s on this machine and would measure itself).

    .venv/bin/python bench/pg_concurrency_bench.py --writers 2 --searchers 2 --seconds 60

Prints a summary and writes bench/results/pg_concurrency_<N>w<M>s.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import random
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

DIMS = 384
NEW_PER_ROUND = 4
POOL = 24
WORDS = [f"{a}{b}" for a in ("har", "lum", "ces", "tor", "vel", "mir", "dun", "pax")
         for b in ("ber", "ton", "ica", "ero", "ash", "uli", "ond", "ext")]  # fmt: skip


def hash_vector(text: str) -> list[float]:
    """A deterministic unit vector for `text` (the loopback server's and the searchers')."""
    import numpy as np

    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
    v = np.random.default_rng(seed).standard_normal(DIMS)
    values: list[float] = (v / np.linalg.norm(v)).astype(np.float32).tolist()
    return values


class _Embeddings(BaseHTTPRequestHandler):
    """POST /v1/embeddings in OpenAI's wire format, answered with `hash_vector`s."""

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        request = json.loads(self.rfile.read(length))
        inputs = request["input"] if isinstance(request["input"], list) else [request["input"]]
        data = [
            {"object": "embedding", "index": i, "embedding": hash_vector(str(text))}
            for i, text in enumerate(inputs)
        ]
        body = json.dumps({"object": "list", "data": data, "model": request["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


@contextmanager
def embedding_server() -> Iterator[str]:
    """Serve `_Embeddings` on a free loopback port; yield its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Embeddings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _note(agent: str, n: int, revision: int, rng: random.Random) -> str:
    words = " ".join(rng.choice(WORDS) for _ in range(40))
    return f"# Note {n} of {agent}\n\n{words}\n\nrevision {revision} of note {n}.\n"


def _ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    if not ordered:
        return {"p50_ms": 0.0, "p99_ms": 0.0}
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 1),
        "p99_ms": round(ordered[int(0.99 * (len(ordered) - 1))] * 1000, 1),
    }


def _start_together(ready: Any, go: Any, until: Any) -> float:
    """Say this process is set up, wait for the common start, return the common deadline."""
    ready.put(os.getpid())
    go.wait()
    deadline: float = until.value
    return deadline


def writer(url: str, root: str, agent: str, block: dict[str, Any], sync: Any, out: Any) -> None:
    """One host syncing one agent in rounds until the deadline; reports syncs, errors,
    revisions. `sync` is (ready queue, go event, deadline value): every process starts the
    clock together, after its imports and connections (a spawned process takes seconds)."""
    from memlane.entrypoints.api import open_manager

    rng = random.Random(agent)
    workspace = Path(root) / agent / "ws"
    (workspace / "memory").mkdir(parents=True)
    revisions: dict[str, int] = {}
    durations: list[float] = []
    errors: list[str] = []
    next_note = 0
    try:
        manager = open_manager(
            workspace=workspace,
            agent_id=agent,
            state_dir=Path(root) / agent / "state",
            config={**block, "sources": ["memory"], "store": {"driver": "postgres"}},
            env={"MEMLANE_STORE_URL": url, "HOME": root},
        )
        until = _start_together(*sync)
        rounds = 0
        while time.monotonic() < until:
            for _ in range(NEW_PER_ROUND):
                name = f"memory/n{next_note}.md"
                (workspace / name).write_text(_note(agent, next_note, 0, rng))
                revisions[name] = 0
                next_note += 1
            edited = rng.choice(sorted(revisions))
            revisions[edited] += 1
            n = int(edited.removeprefix("memory/n").removesuffix(".md"))
            (workspace / edited).write_text(_note(agent, n, revisions[edited], rng))
            if rounds % 3 == 2:
                gone = rng.choice(sorted(revisions))
                (workspace / gone).unlink()
                del revisions[gone]
            start = time.perf_counter()
            try:
                manager.sync()
            except Exception as exc:  # counted and reported, the run goes on
                errors.append(f"{type(exc).__name__}: {exc}")
            durations.append(time.perf_counter() - start)
            rounds += 1
        manager.sync()  # the last round's edits are in when the check runs
        manager.close()
    except BaseException as exc:
        errors.append(f"{type(exc).__name__}: {exc}")
    out.put({"role": "writer", "agent": agent, "syncs": len(durations), "sync": _ms(durations),
             "errors": errors, "revisions": revisions})  # fmt: skip


def searcher(url: str, agents: list[str], vectors: bool, sync: Any, seed: int, out: Any) -> None:
    """One host searching random agents until the deadline; reports latencies and errors."""
    from memlane.adapters.postgres.database import PostgresDatabase
    from memlane.adapters.postgres.postgres_index_store import PostgresIndexStore
    from memlane.domain.keywords import build_fts_query
    from memlane.domain.scoring import zscore_merge
    from memlane.domain.sources import ALL_SOURCES

    rng = random.Random(seed)
    latencies: list[float] = []
    errors: list[str] = []
    hits = vector_legs = 0
    db = PostgresDatabase.open(url)
    stores = {a: PostgresIndexStore(db, a) for a in agents}
    models: dict[str, str] = {}
    until = _start_together(*sync)
    while time.monotonic() < until:
        agent = rng.choice(agents)
        text = f"{rng.choice(WORDS)} {rng.choice(WORDS)}"
        store = stores[agent]
        start = time.perf_counter()
        try:
            match = build_fts_query(text)
            keyword = store.search_keyword(match or "", sources=ALL_SOURCES, limit=POOL)
            vector = []
            if vectors:
                if agent not in models:
                    meta = store.meta()
                    if meta is not None and meta.dimensions is not None:
                        models[agent] = _vector_model(db, agent)
                if agent in models:
                    vector_legs += 1
                    vector = store.search_vector(
                        hash_vector(text), model=models[agent], sources=ALL_SOURCES, limit=POOL
                    )
            fused = zscore_merge(vector, keyword, vector_weight=0.5, text_weight=0.5)
            hits += bool(fused)
        except Exception as exc:  # counted and reported, the run goes on
            errors.append(f"{type(exc).__name__}: {exc}")
        latencies.append(time.perf_counter() - start)
    db.close()
    out.put({"role": "searcher", "searches": len(latencies), "with_hits": hits,
             "with_vector_leg": vector_legs, "latency": _ms(latencies),
             "errors": errors})  # fmt: skip


def _vector_model(db: Any, agent: str) -> str:
    """The model label the agent's sync wrote on its vectors."""
    with db.read() as conn:
        row = conn.exec_driver_sql(
            "SELECT model FROM memlane_chunks WHERE agent = %s AND embedding IS NOT NULL LIMIT 1",
            (agent,),
        ).first()
    return "" if row is None else str(row[0])


def check_exactly_once(url: str, writers: list[dict[str, Any]]) -> dict[str, Any]:
    """Compare each agent's index with its workspace's final state."""
    from memlane.adapters.postgres.database import PostgresDatabase

    db = PostgresDatabase.open(url)
    problems: list[str] = []
    files = chunks = 0
    try:
        with db.read() as conn:
            for report in writers:
                agent, expected = report["agent"], report["revisions"]
                indexed = [str(p) for (p,) in conn.exec_driver_sql(
                    "SELECT path FROM memlane_files WHERE agent = %s", (agent,))]  # fmt: skip
                rows = conn.exec_driver_sql(
                    "SELECT path, text FROM memlane_chunks WHERE agent = %s", (agent,)
                ).all()
                files += len(indexed)
                chunks += len(rows)
                if sorted(indexed) != sorted(expected):
                    missing = sorted(set(expected) - set(indexed))
                    extra = sorted(set(indexed) - set(expected))
                    problems.append(f"{agent}: files differ (missing {missing}, extra {extra})")
                per_path: dict[str, list[str]] = {}
                for path, text in rows:
                    per_path.setdefault(str(path), []).append(str(text))
                for path, revision in expected.items():
                    texts = per_path.get(path, [])
                    marker = f"revision {revision} of note"
                    if len(texts) != 1 or marker not in texts[0]:
                        problems.append(
                            f"{agent} {path}: {len(texts)} chunks, want 1 of r{revision}"
                        )
                for path in set(per_path) - set(expected):
                    problems.append(f"{agent} {path}: chunks of a deleted file")
    finally:
        db.close()
    return {"files": files, "chunks": chunks, "problems": problems, "ok": not problems}


def run(writers: int, searchers: int, seconds: float, provider: str) -> dict[str, Any]:
    """One run on a fresh database; returns the summary."""
    from memlane.adapters.postgres.database import PostgresDatabase
    from memlane.bench.pg_server import bench_server, fresh_database

    root = Path(tempfile.mkdtemp(prefix="memlane-conc-"))
    try:
        with bench_server("memlane-pg-conc-") as server_url:
            url = fresh_database(server_url, f"memlane_conc_{writers}w{searchers}s")
            PostgresDatabase.open(url).close()  # the schema exists before the race starts
            with embedding_server() as base_url:
                block: dict[str, Any] = {"provider": "none"}
                if provider == "openai":
                    block = {"provider": "openai", "model": "bench-hash-384",
                             "remote": {"baseUrl": base_url, "apiKey": "sk-bench"}}  # fmt: skip
                ctx = multiprocessing.get_context("spawn")
                out = ctx.Queue()
                agents = [f"agent-{i}" for i in range(writers)]
                ready, go, until = ctx.Queue(), ctx.Event(), ctx.Value("d", 0.0)
                sync = (ready, go, until)
                procs = [ctx.Process(target=writer, args=(url, str(root), a, block, sync, out))
                         for a in agents]  # fmt: skip
                procs += [ctx.Process(target=searcher,
                                      args=(url, agents, provider != "none", sync, i, out))
                          for i in range(searchers)]  # fmt: skip
                for p in procs:
                    p.start()
                for _ in procs:
                    ready.get(timeout=300)
                # CLOCK_MONOTONIC is one clock for every process of the machine.
                start = time.monotonic()
                until.value = start + seconds
                go.set()
                reports = [out.get(timeout=seconds + 600) for _ in procs]
                for p in procs:
                    p.join(timeout=60)
                wall = time.monotonic() - start
            load = os.getloadavg()[0]
            writer_reports = [r for r in reports if r["role"] == "writer"]
            searcher_reports = [r for r in reports if r["role"] == "searcher"]
            check = check_exactly_once(url, writer_reports)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    searches = sum(r["searches"] for r in searcher_reports)
    return {
        "writers": writers,
        "searchers": searchers,
        "seconds": seconds,
        "provider": provider,
        "wall_s": round(wall, 1),
        "searches": searches,
        "searches_per_s": round(searches / seconds, 1),
        "searches_with_hits": sum(r["with_hits"] for r in searcher_reports),
        "searches_with_vector_leg": sum(r["with_vector_leg"] for r in searcher_reports),
        "searcher_latency": [r["latency"] for r in searcher_reports],
        "search_errors": sum(len(r["errors"]) for r in searcher_reports),
        "syncs": sum(r["syncs"] for r in writer_reports),
        "writer_sync": [r["sync"] for r in writer_reports],
        "sync_errors": sum(len(r["errors"]) for r in writer_reports),
        "error_samples": [e for r in reports for e in r["errors"]][:5],
        "exactly_once": check,
        "load_average_1m": round(load, 1),
        "machine_cores": os.cpu_count(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--writers", type=int, default=2)
    parser.add_argument("--searchers", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--provider", choices=["openai", "none"], default="openai")
    args = parser.parse_args()
    result = run(args.writers, args.searchers, args.seconds, args.provider)
    name = f"pg_concurrency_{args.writers}w{args.searchers}s"
    if args.provider == "none":
        name += "_keyword"
    target = Path(__file__).parent / "results" / f"{name}.json"
    target.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "exactly_once"}, indent=2))
    check = result["exactly_once"]
    print(f"exactly once: {check['ok']} ({check['files']} files, {check['chunks']} chunks) "
          f"{check['problems'][:5]}")  # fmt: skip
    print(f"written {target}")


if __name__ == "__main__":
    main()
