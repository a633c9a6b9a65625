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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memlane.application.query_focus import vector_query
from memlane.bench.studies.replay_cells import Recorded, result_path
from memlane.bench.studies.vector_replay import Meta, replay, unit_matrix


def centroids(meta: Meta, matrix: np.ndarray) -> np.ndarray:
    """Row i: the normalised mean of the vectors of every chunk in chunk i's file."""
    paths = [m[0] for m in meta]
    index = {p: i for i, p in enumerate(dict.fromkeys(paths))}
    owner = np.asarray([index[p] for p in paths])
    sums = np.zeros((len(index), matrix.shape[1]))
    np.add.at(sums, owner, matrix)
    sums /= np.linalg.norm(sums, axis=1, keepdims=True)
    rows: np.ndarray = sums[owner]
    return rows


def scorer(betas: Sequence[float]) -> Any:
    def score_unit(
        batch: list[Recorded], manager: Any, store: Any, provider: Any, db: Path
    ) -> tuple[Meta, dict[str, np.ndarray]]:
        share = manager.settings.query.common_word_share
        asked = [vector_query(store, f.query.text, share=share).text for f in batch]
        q = np.asarray(provider._engine.query(asked), dtype=np.float64)  # the shipped query path
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        meta, matrix = unit_matrix(db)
        cos_chunk, cos_file = matrix @ q.T, centroids(meta, matrix) @ q.T
        return meta, {f"{b}": (1 - b) * cos_chunk + b * cos_file for b in [0.0, *betas]}

    return score_unit


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.studies.file_vectors")
    p.add_argument("datasets", nargs="+")
    p.add_argument("--beta", default="0.1,0.2,0.3,0.5")
    p.add_argument("--out", default="")
    args = p.parse_args()
    report = replay(args.datasets, scorer([float(b) for b in args.beta.split(",")]))
    out = result_path(args.out, "file-vectors")
    out.write_text(json.dumps(report, indent=1))
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
