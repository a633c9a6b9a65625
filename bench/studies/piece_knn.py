"""Study: should the best pieces also *find* chunks, not only re-score the legs' candidates?

Since session 23 a note chunk's vector-leg score mixes its cosine with its best piece's
(domain/note_pieces.py), but only for the chunks the two legs already fetched (200 each). A
chunk whose one vector is diluted past the 200th cosine, yet holds the one sentence the question
asks about, is never re-scored. This study records, per question, the chunks whose best piece is
among the first K of all pieces of the unit and that neither leg fetched, and replays the
shipped rule with those chunks added to the vector leg.

    python -m bench.studies.fusion_study collect scifact_train     # the legs first
    python -m bench.studies.piece_vectors collect scifact_train    # piece cosines (cached)
    python -m bench.studies.piece_knn collect scifact_train
    python -m bench.studies.piece_knn compare scifact_train --widen 50
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memlane.bench.studies.fusion_study import LEGS_DIR
from memlane.bench.studies.piece_vectors import (
    RULES,
    Ranker,
    by_question,
    paired_table,
    recorded_units,
    replay,
)
from memlane.domain.index_meta import vector_label

DEPTH = 200  # chunks recorded per question, by their best piece


def collect(name: str) -> None:
    out: list[dict[str, Any]] = []
    for unit_id, (manager, store, provider), pieces, questions in recorded_units(name):
        label = vector_label(provider.model, provider.key)
        for q in questions:
            best = pieces.best(q.unit_vector)
            fetched = q.candidates()
            order = [i for i in np.argsort(-best) if pieces.ids[i] not in fetched][:DEPTH]
            cosine = {
                c.chunk_id: c.score
                for c in store.search_vector(
                    q.embedded, model=label, sources=manager.settings.sources, limit=100_000
                )
            }
            out.append(
                {
                    "unit": unit_id,
                    "qid": q.qid,
                    "extra": [
                        [*pieces.places[c], cosine.get(c, -1.0), c, float(best[i])]
                        for i in order
                        for c in [pieces.ids[i]]
                    ],
                }
            )
    (LEGS_DIR / f"{name}.piece-knn.json").write_text(json.dumps(out))


def _widened(widen: int) -> Any:
    """mix50 with the `widen` best-by-piece chunks no leg fetched added to the vector leg."""
    mix = RULES["mix50"]

    def rule(vec: list[Any], kw: list[Any], pool: int, maxsim: dict[str, float], extra: Any) -> Any:
        more = extra[:widen]
        sims = dict(maxsim) | {e[4]: e[5] for e in more}
        return mix([*vec, *(tuple(e[:5]) for e in more)], kw, pool, sims)

    return rule


def per_query(name: str, widths: Sequence[int]) -> dict[int, dict[str, dict[str, list[float]]]]:
    pieces = by_question(name, "pieces.json", "maxsim")
    extra = by_question(name, "piece-knn.json", "extra")

    def ranker(widen: int) -> Ranker:
        return lambda key, vec, kw: _widened(widen)(vec, kw, 200, pieces[key], extra[key])

    return replay(
        name,
        {w: ranker(w) for w in widths},
        known=lambda key: key in pieces and key in extra,
        more_places=lambda key: extra[key],
    )


def compare(names: Sequence[str], widen: int) -> dict[str, Any]:
    report: dict[str, Any] = {}
    for name in names:
        vals = per_query(name, [0, widen])
        print(f"\n{name}: mix50 + {widen} chunks found by their best piece − mix50")
        report[name] = paired_table(vals[0], vals[widen])
    return report


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.studies.piece_knn")
    p.add_argument("action", choices=("collect", "compare"))
    p.add_argument("datasets", nargs="+")
    p.add_argument("--widen", type=int, default=50)
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    if args.action == "collect":
        for name in args.datasets:
            collect(name)
        return
    report = compare(args.datasets, args.widen)
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
