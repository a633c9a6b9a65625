"""The loop shared by the studies that re-score the vector leg (`query_views`, `file_vectors`).

A study gives, for each unit, a score for every chunk of the unit's store under each of its
variants (the first being the shipped cosine); this module ranks each variant's vector leg from
those scores (its best `POOL` chunks), replays the shipped z-score fusion (0.5 / 0.5) over it and
the keyword leg `fusion_study collect` recorded, files every question's metrics per variant, mode
and half, and checks that the first variant's hybrid top 10 equals the recorded legs' replay.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import sqlean

from memlane.bench.cli import BENCH_DIR
from memlane.bench.studies.fusion_study import Leg, opened_unit, shipped
from memlane.bench.studies.replay_cells import Cells, Recorded, means, print_table, recorded_queries

POOL = 200
KEEP = 50

Meta = list[tuple[str, int, int, str]]  # (path, start line, end line, chunk id) per chunk
# (the unit's recorded questions, its manager, store, provider, store file) ->
# (chunk metadata, variant -> scores, one row per chunk and one column per question)
UnitScorer = Callable[[list[Recorded], Any, Any, Any, Path], tuple[Meta, dict[str, np.ndarray]]]


def unit_matrix(store_path: Path) -> tuple[Meta, np.ndarray]:
    """The metadata of every embedded chunk of a store, and their unit vectors."""
    conn = sqlean.connect(f"file:{store_path}?mode=ro", uri=True)
    rows = conn.execute(
        "SELECT path, start_line, end_line, id, embedding FROM chunks WHERE embedding IS NOT NULL"
    ).fetchall()
    conn.close()
    vecs = np.stack([np.frombuffer(r[4], dtype="<f4") for r in rows]).astype(np.float64)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return [(r[0], r[1], r[2], r[3]) for r in rows], vecs


def leg_of(meta: Meta, scores: np.ndarray) -> Leg:
    top = np.argsort(-scores, kind="stable")[:POOL]
    return [(*meta[i][:3], float(scores[i]), meta[i][3]) for i in top]


def unit_batches(name: str) -> Iterator[list[Recorded]]:
    """The recorded questions grouped by unit, in the harness's unit order."""
    batch: list[Recorded] = []
    for found in recorded_queries(name):
        if batch and batch[0].unit.unit_id != found.unit.unit_id:
            yield batch
            batch = []
        batch.append(found)
    if batch:
        yield batch


def replay(names: Sequence[str], score_unit: UnitScorer) -> dict[str, Any]:
    fuse = shipped("zscore", 0.5, 0.5)
    report: dict[str, Any] = {}
    for name in names:
        started = time.monotonic()
        cells: Cells = {}
        same = total = 0
        base = ""
        for batch in unit_batches(name):
            unit = batch[0].unit
            with opened_unit(name, unit, BENCH_DIR / "work") as opened:
                meta, scored = score_unit(batch, *opened)
            base = next(iter(scored))
            for i, found in enumerate(batch):
                kw: Leg = [tuple(e) for e in found.legs["keyword"]]
                recorded: Leg = [tuple(e) for e in found.legs["vector"]]
                where = {m[3]: m[:3] for m in meta}
                where.update({e[4]: (e[0], e[1], e[2]) for e in [*recorded, *kw]})
                for variant, scores in scored.items():
                    vec = leg_of(meta, scores[:, i])
                    rankings = {
                        "vector": [e[4] for e in vec[:KEEP]],
                        "hybrid": fuse(vec, kw, POOL)[:KEEP],
                    }
                    if variant == base:
                        total += 1
                        same += rankings["hybrid"][:10] == fuse(recorded, kw, POOL)[:10]
                    found.file(cells, variant, rankings, where)
            print(f"{name}/{unit.unit_id}: {len(batch)} questions", flush=True)
        report[name] = {
            "seconds": round(time.monotonic() - started, 1),
            "base_same": [same, total],
            "cells": means(cells),
        }
        print(f"\n{name}: {report[name]['seconds']} s; base top 10 = recorded: {same}/{total}")
        print_table(report[name]["cells"], base, ("vector", "hybrid"))
    return report
