"""Benchmark: what scoring note chunks by their best piece adds to a search's time.

Two managers on one real store (a bench unit's, every piece embedded), one with the default
`query.pieceWeight` and one with 0, answer the same questions in alternation, so both meet the
same machine load; each search is timed end to end (query embedding included) and the medians
and their ratio are printed and written as JSON.

    python -m bench.studies.piece_search_bench scifact [--queries 200] [--out F]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from memlane.bench.cli import BENCH_DIR
from memlane.bench.datasets import registry
from memlane.bench.runner import memlane_opener, mode_config, open_unit
from memlane.bench.workspace import UnitPaths
from memlane.domain.note_pieces import DEFAULT_PIECE_WEIGHT


def run(name: str, queries: int) -> dict[str, Any]:
    dataset = registry.load(name, None, registry.DEFAULT_DATA_ROOT)
    unit = next(iter(dataset.units()))
    paths = UnitPaths.for_unit(BENCH_DIR / "work", name, unit.unit_id)
    store = paths.store_path("local")
    weights = {"pieces": DEFAULT_PIECE_WEIGHT, "cosine only": 0.0}
    managers = {
        label: open_unit(
            memlane_opener(),
            paths,
            mode_config("hybrid", "local", store, 50, {"query": {"pieceWeight": w}}),
        )
        for label, w in weights.items()
    }
    times: dict[str, list[float]] = {label: [] for label in managers}
    try:
        asked = [q.text for q in unit.queries[:queries]]
        for manager in managers.values():  # warm both (model, caches)
            manager.search(asked[0])
        for i, text in enumerate(asked):
            order = list(managers) if i % 2 == 0 else list(reversed(managers))
            for label in order:
                started = time.perf_counter()
                managers[label].search(text)
                times[label].append((time.perf_counter() - started) * 1000)
    finally:
        for manager in managers.values():
            manager.close()
    medians = {label: statistics.median(v) for label, v in times.items()}
    report = {
        "set": name,
        "queries": len(times["pieces"]),
        "median_ms": medians,
        "ratio": medians["pieces"] / medians["cosine only"],
    }
    print(json.dumps(report, indent=1))
    return report


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.studies.piece_search_bench")
    p.add_argument("dataset")
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    report = run(args.dataset, args.queries)
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
