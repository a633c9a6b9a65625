"""Benchmark: how fast `memlane ui` answers its pages on a large index (issue 28: ≤ 100 ms p50
at 100k chunks).

Builds a synthetic workspace (notes of short paragraphs over a 20k-word vocabulary, small chunks
so that the chunk count is reached with little text), indexes it keyword-only with
`memlane index` (no provider: the vector leg is store_bench.py's subject), starts a real
`memlane ui` process on it and times, over HTTP from this process, GET `/search?q=...` (two or
three vocabulary words: the keyword leg, fusion, snippets, marking and the evidence bars), GET
`/status` (the health page: counts, the event log, the plots) and GET `/status.json` (what the
page polls each second). Each is warmed up, then timed `--requests` times; p50 and p95.

    .venv/bin/python bench/ui_bench.py [--chunks 100000] [--requests 40] [--out ui_bench]

Prints a table and writes bench/results/<out>.json. The work folder (bench/work/ui_bench_<n>)
is kept, so a second run reuses the index (--rebuild starts over).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
CHUNKS_PER_FILE = 20
WORDS_PER_PARAGRAPH = 16
CONFIG = (
    "{agents: {defaults: {memorySearch: {provider: 'none', sources: ['memory'], "
    "chunking: {tokens: 48, overlap: 0}, sync: {watch: false, onSearch: false}}}}}"
)


def _memlane() -> list[str]:
    script = Path(sys.executable).with_name("memlane")
    return [str(script)] if script.exists() else [sys.executable, "-m", "memlane.entrypoints"]


def _vocabulary(rng: random.Random) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(4, 9))) for _ in range(20_000)]


def _build(work: Path, chunks: int, rng: random.Random, words: list[str]) -> None:
    notes = work / "workspace" / "memory"
    notes.mkdir(parents=True)
    for n in range(max(chunks // CHUNKS_PER_FILE, 1)):
        paragraphs = [
            " ".join(rng.choice(words) for _ in range(WORDS_PER_PARAGRAPH))
            for _ in range(CHUNKS_PER_FILE)
        ]
        (notes / f"note-{n:06}.md").write_text(f"# Note {n}\n\n" + "\n\n".join(paragraphs) + "\n")
    (work / "config.json5").write_text(CONFIG)


def _args(work: Path) -> list[str]:
    return [
        "--config", str(work / "config.json5"), "--state-dir", str(work / "state"),
        "--workspace", str(work / "workspace"),
    ]  # fmt: skip


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _timed(client: httpx.Client, url: str, count: int) -> dict[str, float]:
    for _ in range(3):
        client.get(url).raise_for_status()
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        response = client.get(url)
        samples.append(time.perf_counter() - started)
        response.raise_for_status()
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 1),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--out", default="ui_bench")
    parser.add_argument("--rebuild", action="store_true")
    args = parser.parse_args()
    rng = random.Random(28)
    words = _vocabulary(rng)
    work = ROOT / "bench" / "work" / f"ui_bench_{args.chunks}"
    if args.rebuild and work.exists():
        shutil.rmtree(work)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env["HOME"] = str(work)
    index_seconds = None
    if not (work / "state").exists():
        _build(work, args.chunks, rng, words)
        started = time.perf_counter()
        subprocess.run([*_memlane(), *_args(work), "index"], check=True, env=env)
        index_seconds = round(time.perf_counter() - started, 1)
    port = _free_port()
    log = (work / "ui.log").open("wb")
    ui = subprocess.Popen(
        [*_memlane(), *_args(work), "ui", "--port", str(port), "--read-only"],
        stdout=subprocess.DEVNULL, stderr=log, env=env,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=base, timeout=120) as client:
            deadline = time.monotonic() + 300
            while True:
                try:
                    if client.get("/health").json()["firstSyncDone"]:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline or ui.poll() is not None:
                    raise SystemExit(f"memlane ui did not start: see {work / 'ui.log'}")
                time.sleep(0.3)
            status = client.get("/status.json").json()
            queries = [" ".join(rng.sample(words, rng.choice((2, 3)))) for _ in range(8)]
            search = [_timed(client, f"/search?q={q}", max(args.requests // 8, 3)) for q in queries]
            results = {
                "chunks": status["chunks"],
                "files": status["files"],
                "index_seconds": index_seconds,
                "search": {
                    "p50_ms": round(statistics.median(s["p50_ms"] for s in search), 1),
                    "p95_ms": max(s["p95_ms"] for s in search),
                },
                "status": _timed(client, "/status", args.requests),
                "status_json": _timed(client, "/status.json", args.requests),
                "requests": args.requests,
                "cpu": os.cpu_count(),
            }
    finally:
        ui.terminate()
        ui.wait(30)
        log.close()
    print(f"{results['chunks']:,} chunks in {results['files']:,} files")
    for page in ("search", "status", "status_json"):
        timing = results[page]
        assert isinstance(timing, dict)
        print(f"  {page:<12} p50 {timing['p50_ms']:>7} ms   p95 {timing['p95_ms']:>7} ms")
    out = ROOT / "bench" / "results" / f"{args.out}.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"written: {out}")


if __name__ == "__main__":
    main()
