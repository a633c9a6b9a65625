"""Which background-relative signal tells a question the memory holds nothing about?

For each pair (`bench/studies/foreign.py` pairs: `<queries>:<memory>`, or `<set>` for its own, real
queries) the query is embedded with the bundled model and compared with every chunk vector of
the memory's store; candidate signals are computed from those cosines alone (no words, no
absolute cosine):

- `z_best`: the best cosine's standing above the background (what the searcher ships: the
  sample is the first 256 chunks by id, its top 5 % trimmed; domain/confidence.py);
- `z_best_evt`: the same less √(2 ln N), what the best of N background chunks would reach;
- `gap_1_6`: (best − 6th best) in background standard deviations;
- `z_top5`: the mean of the 5 best cosines' standings;
- `csls_<signal>` (session 22): each signal over cos(q, c) - r(c), r(c) the chunk's mean cosine
  with its 10 nearest chunks, which discounts "hub" chunks close to everything.

`python -m bench.studies.confidence_study locomo xquad_zh scifact:locomo ... --limit 300` prints,
per
signal, the threshold that flags at most `--max-real` of the real queries of every real set,
and the share of foreign queries it flags (pooled over the foreign pairs, and per pair).
"""

from __future__ import annotations

import argparse
import json
import math
import sqlite3
import statistics
from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np

from memlane.bench.datasets import registry
from memlane.bench.runner import memlane_opener, open_unit
from memlane.bench.studies.foreign import (
    DATA_ROOT,
    DEFAULT_WORK,
    assignments,
    base_config,
    parse_pair,
)
from memlane.bench.workspace import UnitPaths, materialize
from memlane.domain.confidence import BACKGROUND_SAMPLE, background_of
from memlane.domain.embedding import query_embedding_input
from memlane.domain.index_meta import vector_label

Signal = Callable[[np.ndarray, np.ndarray], float]


def _std(sample: np.ndarray) -> tuple[float, float]:
    bg = background_of([float(x) for x in sample])
    assert bg is not None
    return bg.mean, bg.spread


def z_best(cos: np.ndarray, sample: np.ndarray) -> float:
    mean, spread = _std(sample)
    return float((cos.max() - mean) / spread)


def z_best_evt(cos: np.ndarray, sample: np.ndarray) -> float:
    return z_best(cos, sample) - math.sqrt(2.0 * math.log(max(2, cos.size)))


def gap_1_6(cos: np.ndarray, sample: np.ndarray) -> float:
    _, spread = _std(sample)
    top = np.sort(cos)[::-1]
    return float((top[0] - top[min(5, top.size - 1)]) / spread)


def z_top5(cos: np.ndarray, sample: np.ndarray) -> float:
    mean, spread = _std(sample)
    top = np.sort(cos)[::-1][:5]
    return float((top.mean() - mean) / spread)


def peak_ratio(cos: np.ndarray, sample: np.ndarray) -> float:
    mean, _ = _std(sample)
    top = np.sort(cos)[::-1]
    return float((top[0] - top[min(5, top.size - 1)]) / max(1e-9, top[0] - mean))


def z_local(cos: np.ndarray, _sample: np.ndarray) -> float:
    top = np.sort(cos)[::-1][:50]
    return float((top[0] - top[1:].mean()) / max(1e-9, top[1:].std()))


def gap_1_2(cos: np.ndarray, sample: np.ndarray) -> float:
    _, spread = _std(sample)
    top = np.sort(cos)[::-1]
    return float((top[0] - top[1]) / spread)


SIGNALS: dict[str, Signal] = {
    "peak_ratio": peak_ratio,
    "z_local": z_local,
    "gap_1_2": gap_1_2,
    "z_best": z_best,
    "z_best_evt": z_best_evt,
    "gap_1_6": gap_1_6,
    "z_top5": z_top5,
}


# Session 22: the same signals over cos(q, c) - r(c), r(c) the mean cosine of chunk c with its
# HUB_K nearest other chunks (CSLS, which discounts "hub" chunks near everything).
HUB_K = 10


def neighbour_means(matrix: np.ndarray, k: int = HUB_K) -> np.ndarray:
    """Each row's mean cosine with its k nearest other rows (rows unit-normalised); 0 for a
    matrix of one row."""
    k = min(k, len(matrix) - 1)
    out = np.zeros(len(matrix))
    if k < 1:
        return out
    for at in range(0, len(matrix), 2048):
        sims = matrix[at : at + 2048] @ matrix.T
        sims[np.arange(sims.shape[0]), at + np.arange(sims.shape[0])] = -np.inf
        out[at : at + 2048] = np.partition(sims, -k, axis=1)[:, -k:].mean(axis=1)
    return out


def _store_vectors(store: Path, label: str) -> tuple[np.ndarray, np.ndarray]:
    """(every chunk vector, the background sample) of a store, as float64 rows."""
    with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as conn:
        rows = conn.execute(
            "SELECT embedding FROM chunks WHERE model = ? AND embedding IS NOT NULL ORDER BY id",
            (label,),
        ).fetchall()
    matrix = np.stack([np.frombuffer(bytes(r[0]), dtype=np.float32) for r in rows]).astype(
        np.float64
    )
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix, matrix[:BACKGROUND_SAMPLE]


def measure(pair: str, work_dir: Path, limit: int | None) -> dict[str, list[float]]:
    """Per signal, its value for every query of the pair."""
    queries_name, memory_name = parse_pair(pair)
    out: dict[str, list[float]] = {name: [] for name in [*SIGNALS, *(f"csls_{n}" for n in SIGNALS)]}
    opener = memlane_opener()
    for unit, queries in assignments(queries_name, memory_name, limit):
        paths = UnitPaths.for_unit(work_dir, memory_name, unit.unit_id)
        materialize(unit, paths)
        manager: Any = open_unit(opener, paths, base_config(paths.store_path("local"), {}))
        try:
            provider = manager._searching._searcher._runtime.provider  # a study tool reaches in
            label = vector_label(provider.model, provider.key)
            matrix, sample_rows = _store_vectors(paths.store_path("local"), label)
            hub = neighbour_means(matrix)
            for q in queries:
                qv = np.asarray(
                    provider.embed_query(query_embedding_input(q.text, provider.max_input_tokens)),
                    dtype=np.float64,
                )
                qv /= np.linalg.norm(qv)
                cos, sample = matrix @ qv, sample_rows @ qv
                for name, signal in SIGNALS.items():
                    out[name].append(signal(cos, sample))
                    out[f"csls_{name}"].append(signal(cos - hub, sample - hub[: len(sample)]))
        finally:
            manager.close()
    return out


def report(values: dict[str, dict[str, list[float]]], max_real: float) -> dict[str, Any]:
    real = [p for p in values if ":" not in p]
    foreign = [p for p in values if ":" in p]
    table: dict[str, Any] = {}
    for name in values[next(iter(values))]:
        # The highest threshold that flags at most max_real of every real set.
        threshold = min(float(np.quantile(values[p][name], max_real)) for p in real)
        per_pair = {
            p: sum(1 for v in values[p][name] if v < threshold) / len(values[p][name])
            for p in values
        }
        pooled = [v for p in foreign for v in values[p][name]]
        table[name] = {
            "threshold": threshold,
            "foreign_flagged_pooled": sum(1 for v in pooled if v < threshold) / len(pooled),
            "flagged": per_pair,
            "medians": {p: statistics.median(values[p][name]) for p in values},
        }
    return table


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        prog="python -m bench.studies.confidence_study", description=__doc__
    )
    p.add_argument("pairs", nargs="+")
    p.add_argument("--work-dir", type=Path, default=DEFAULT_WORK)
    p.add_argument("--data-root", type=Path, default=registry.DEFAULT_DATA_ROOT)
    p.add_argument("--limit", type=int, default=300)
    p.add_argument("--max-real", type=float, default=0.05)
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    DATA_ROOT[0] = args.data_root
    values = {pair: measure(pair, args.work_dir, args.limit) for pair in args.pairs}
    table = report(values, args.max_real)
    for name, row in table.items():
        flagged = ", ".join(f"{k} {v:.0%}" for k, v in row["flagged"].items())
        print(
            f"{name:11} threshold {row['threshold']:.2f}: foreign flagged "
            f"{row['foreign_flagged_pooled']:.1%} pooled; {flagged}"
        )
    if args.out is not None:
        args.out.write_text(json.dumps({"max_real": args.max_real, "signals": table}, indent=1))
        print(f"written: {args.out}")


if __name__ == "__main__":
    main()
