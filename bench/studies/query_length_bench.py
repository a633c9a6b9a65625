"""Benchmark: how long a huge query takes, end to end, with the real local model (issue 14.9).

A 100 KB query used to be embedded whole: the local model windows a long input itself, so the
whole page was embedded window by window (134.6 s reported). Now only the model's window is
embedded (`domain.embedding.query_embedding_input`) and the keyword leg stops after the first
MAX_FTS_TERMS distinct terms. This script times, on a small real workspace and store:
  * `search` with a 100 KB query (the capped pipeline), median of --repeat runs;
  * `search` with an ordinary query, for scale;
  * with --uncapped, the old cost: the provider embedding the whole 100 KB query (slow).

Run:  .venv/bin/python bench/studies/query_length_bench.py [--kib 100] [--repeat 5] [--uncapped]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from memlane.entrypoints.api import open_manager
from memlane.entrypoints.container.embedding import provider_factories

WORDS = [
    "deploy",
    "cluster",
    "database",
    "migration",
    "window",
    "latency",
    "cache",
    "index",
    "query",
    "vector",
    "keyword",
    "postgres",
    "pgbouncer",
    "transaction",
    "statement",
    "timeout",
    "retry",
    "backoff",
    "queue",
    "worker",
    "schedule",
]


def _query(kib: int, rng: random.Random) -> str:
    text = ""
    while len(text.encode()) < kib * 1024:
        text += " ".join(rng.choice(WORDS) + str(rng.randrange(10_000)) for _ in range(200)) + "\n"
    return text[: kib * 1024]


def _timed(call: object, repeat: int) -> float:
    assert callable(call)
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        runs.append(time.perf_counter() - started)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kib", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--uncapped", action="store_true", help="also time the old whole embed")
    args = parser.parse_args()
    rng = random.Random(14)
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "ws"
        (workspace / "memory").mkdir(parents=True)
        for i in range(20):
            note = " ".join(rng.choice(WORDS) for _ in range(300))
            (workspace / "memory" / f"note-{i}.md").write_text(f"# Note {i}\n\n{note}\n")
        manager = open_manager(
            workspace=workspace, state_dir=Path(tmp) / "state", config={"provider": "local"}
        )
        report = manager.sync()
        print(f"indexed {report.files_indexed} notes, {report.chunks_embedded} chunks embedded")
        huge = _query(args.kib, rng)
        response = manager.search(huge)
        print(f"mode={response.mode} provider={response.provider} results={len(response.results)}")
        ordinary = _timed(lambda: manager.search("pgbouncer transaction timeout"), args.repeat)
        capped = _timed(lambda: manager.search(huge), args.repeat)
        print(f"ordinary query: median {ordinary * 1000:.1f} ms over {args.repeat} runs")
        print(f"{args.kib} KiB query: median {capped * 1000:.1f} ms over {args.repeat} runs")
        if args.uncapped:
            # The same local model, asked for the whole query as the old search did.
            local = provider_factories(manager.settings, {})["local"]()
            whole = _timed(lambda: local.embed_query(huge), 1)
            print(f"{args.kib} KiB query embedded whole (before the cap): {whole:.1f} s")
        manager.close()


if __name__ == "__main__":
    main()
