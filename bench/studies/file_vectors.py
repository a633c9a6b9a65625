"""Study: does a chunk rank better when its whole file's meaning is scored beside its own?

A long note is cut into chunks, and each chunk's vector holds only its part: the second half of
a SciFact abstract no longer carries the claim its first half sets up. Session 17 gave every
chunk its headings, which lifted SciFact's vector leg; this study goes further and gives each
chunk the mean of its file's chunk vectors (normalised: the file's "centroid"), scoring it
(1 - beta) * cos(q, chunk) + beta * cos(q, centroid). A file with one chunk scores as before.
It replays the shipped z-score fusion (0.5 / 0.5, pool 200, 50 kept) over the re-scored vector
leg and the recorded keyword leg (`bench/work/legs/<set>.json`); beta 0 is the shipped search.
Transcripts are replayed too, though a session file of twenty chunks is a different thing from
a two-chunk abstract: a rule could be limited to notes.

    python -m bench.studies.file_vectors scifact_train scifact ... [--beta 0.1,0.2,0.3]

Writes `bench/results/<stamp>-file-vectors.json`. Nothing here ships.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from memlane.application.query_focus import vector_query
from memlane.bench.cli import BENCH_DIR
from memlane.bench.studies.fusion_study import Leg, opened_unit, shipped
from memlane.bench.studies.query_views import KEEP, POOL, leg_of, unit_batches, unit_matrix
from memlane.bench.studies.replay_cells import Cells, means, print_table, result_path


def centroids(meta: Sequence[tuple[str, int, int, str]], matrix: np.ndarray) -> np.ndarray:
    """Row i: the normalised mean of the vectors of every chunk in chunk i's file."""
    paths = [m[0] for m in meta]
    index = {p: i for i, p in enumerate(dict.fromkeys(paths))}
    owner = np.asarray([index[p] for p in paths])
    sums = np.zeros((len(index), matrix.shape[1]))
    np.add.at(sums, owner, matrix)
    sums /= np.linalg.norm(sums, axis=1, keepdims=True)
    rows: np.ndarray = sums[owner]
    return rows


def run(names: Sequence[str], betas: Sequence[float]) -> dict[str, Any]:
    fuse = shipped("zscore", 0.5, 0.5)
    report: dict[str, Any] = {}
    for name in names:
        started = time.monotonic()
        cells: Cells = {}
        same = total = 0
        for batch in unit_batches(name):
            unit = batch[0].unit
            with opened_unit(name, unit, BENCH_DIR / "work") as (manager, store, provider, db):
                share = manager.settings.query.common_word_share
                asked = [vector_query(store, f.query.text, share=share).text for f in batch]
                q = np.asarray(provider._engine.query(asked), dtype=np.float64)  # study tool
                meta, matrix = unit_matrix(db)
            q /= np.linalg.norm(q, axis=1, keepdims=True)
            cos_chunk, cos_file = matrix @ q.T, centroids(meta, matrix) @ q.T
            for i, found in enumerate(batch):
                kw: Leg = [tuple(e) for e in found.legs["keyword"]]
                recorded: Leg = [tuple(e) for e in found.legs["vector"]]
                where = {m[3]: m[:3] for m in meta}
                where.update({e[4]: (e[0], e[1], e[2]) for e in [*recorded, *kw]})
                for beta in [0.0, *betas]:
                    vec = leg_of(meta, (1 - beta) * cos_chunk[:, i] + beta * cos_file[:, i])
                    rankings = {
                        "vector": [e[4] for e in vec[:KEEP]],
                        "hybrid": fuse(vec, kw, POOL)[:KEEP],
                    }
                    if beta == 0.0:
                        total += 1
                        same += rankings["hybrid"][:10] == fuse(recorded, kw, POOL)[:10]
                    found.file(cells, f"{beta}", rankings, where)
            print(f"{name}/{unit.unit_id}: {len(batch)} questions", flush=True)
        report[name] = {
            "seconds": round(time.monotonic() - started, 1),
            "beta0_same": [same, total],
            "cells": means(cells),
        }
        print(f"\n{name}: {report[name]['seconds']} s; beta 0 top 10 = recorded: {same}/{total}")
        print_table(report[name]["cells"], "0.0", ("vector", "hybrid"))
    return report


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.studies.file_vectors")
    p.add_argument("datasets", nargs="+")
    p.add_argument("--beta", default="0.1,0.2,0.3,0.5")
    p.add_argument("--out", default="")
    args = p.parse_args()
    report = run(args.datasets, [float(b) for b in args.beta.split(",")])
    out = result_path(args.out, "file-vectors")
    out.write_text(json.dumps(report, indent=1))
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
