"""Hub chunks: does discounting a chunk that is close to everything rank better?

Some chunks (greetings, short generic lines, boilerplate) sit near many others in the model's
space and so come up for many unrelated questions ("hubs"). Cross-domain similarity local
scaling (CSLS, from word translation) scores cos(q, c) - r(c), r(c) the mean cosine of c with
its k nearest other chunks: a hub's high cosines are discounted. This study replays the recorded
legs (`bench/work/legs/<set>.json`) with the vector leg re-scored cos - beta * r(c), r(c) from
every chunk's stored vector in the unit's store, then the shipped z-score fusion (0.5 / 0.5)
over it and the recorded keyword leg (pool 200, 50 kept). It reports vector-only and hybrid
means per half (`fusion_study.half_of`) and category.

    python -m bench.studies.hubness scifact_train locomo ... [--beta 0.25,0.5,1] [--k 10]

Writes `bench/results/<stamp>-hubness.json`.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import sqlean

from memlane.bench.cli import BENCH_DIR
from memlane.bench.studies.confidence_study import neighbour_means
from memlane.bench.studies.fusion_study import Leg, shipped
from memlane.bench.studies.replay_cells import (
    Cells,
    means,
    print_table,
    recorded_queries,
    result_path,
)
from memlane.bench.workspace import UnitPaths

POOL = 200
KEEP = 50


def hub_scores(store: Path, k: int) -> dict[str, float]:
    """chunk id -> mean cosine with its k nearest other chunks of the store."""
    conn = sqlean.connect(f"file:{store}?mode=ro", uri=True)
    rows = conn.execute("SELECT id, embedding FROM chunks WHERE embedding IS NOT NULL").fetchall()
    conn.close()
    vecs = np.stack([np.frombuffer(r[1], dtype="<f4") for r in rows]).astype(np.float64)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return {r[0]: float(m) for r, m in zip(rows, neighbour_means(vecs, k), strict=True)}


def run(names: Sequence[str], betas: Sequence[float], k: int) -> dict[str, Any]:
    fuse = shipped("zscore", 0.5, 0.5)
    report: dict[str, Any] = {}
    for name in names:
        started = time.monotonic()
        cells: Cells = {}
        hubs: tuple[str, dict[str, float]] | None = None
        for found in recorded_queries(name):
            if hubs is None or hubs[0] != found.unit.unit_id:
                paths = UnitPaths.for_unit(BENCH_DIR / "work", name, found.unit.unit_id)
                hubs = (found.unit.unit_id, hub_scores(paths.store_path("local"), k))
            r = hubs[1]
            vec0: Leg = [tuple(e) for e in found.legs["vector"]]
            kw: Leg = [tuple(e) for e in found.legs["keyword"]]
            where = {e[4]: (e[0], e[1], e[2]) for e in [*vec0, *kw]}
            for beta in [0.0, *betas]:
                vec: Leg = [(*e[:3], e[3] - beta * r.get(e[4], 0.0), e[4]) for e in vec0]
                rankings = {
                    "vector": [e[4] for e in sorted(vec, key=lambda e: (-e[3], e[4]))[:KEEP]],
                    "hybrid": fuse(vec, kw, POOL)[:KEEP],
                }
                found.file(cells, f"{beta}", rankings, where)
        report[name] = {"seconds": round(time.monotonic() - started, 1), "cells": means(cells)}
        print(f"\n{name}: {report[name]['seconds']} s")
        print_table(report[name]["cells"], "0.0", ("vector", "hybrid"))
    return report


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.studies.hubness")
    p.add_argument("datasets", nargs="+")
    p.add_argument("--beta", default="0.1,0.25,0.5,0.75,1.0")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--out", default="")
    args = p.parse_args()
    report = run(args.datasets, [float(b) for b in args.beta.split(",")], args.k)
    out = result_path(args.out, "hubness")
    out.write_text(json.dumps(report, indent=1))
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
