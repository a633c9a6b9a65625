"""Study: is a note chunk's *best* piece the right summary of its pieces, or would the best two,
or a soft maximum over all of them, rank better?

Since session 23 the vector leg scores a note chunk 0.5 · its cosine + 0.5 · its best piece's
(domain/note_pieces.py). A claim that matches two sentences of an abstract, or a question whose
answer spans two lines, may be better served by a summary that also hears the second piece.
This study records each candidate's three best piece cosines and replays the shipped fusion with
other summaries in the best piece's place.

    python -m bench.studies.fusion_study collect scifact_train     # the legs first
    python -m bench.studies.piece_shapes collect scifact_train     # piece vectors cached
    python -m bench.studies.piece_shapes compare scifact_train --rule top2
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from memlane.bench.studies.fusion_study import LEGS_DIR, Leg
from memlane.bench.studies.piece_vectors import (
    RULES,
    SHOW,
    QueryKey,
    Ranker,
    by_question,
    paired_table,
    recorded_units,
    replay,
)

TOP = 3  # piece cosines kept per candidate, best first

Summary = Callable[[list[float]], float]


def collect(name: str) -> None:
    out: list[dict[str, Any]] = []
    for unit_id, _, pieces, questions in recorded_units(name):
        rows_of: dict[str, list[int]] = defaultdict(list)
        for row, i in enumerate(pieces.owners):
            rows_of[pieces.ids[i]].append(row)
        for q in questions:
            sims = pieces.matrix @ q.unit_vector
            out.append(
                {
                    "unit": unit_id,
                    "qid": q.qid,
                    "top": {
                        c: sorted((float(sims[r]) for r in rows_of[c]), reverse=True)[:TOP]
                        for c in q.candidates()
                        if c in rows_of
                    },
                }
            )
    (LEGS_DIR / f"{name}.piece-top.json").write_text(json.dumps(out))


def _softmax(t: float) -> Summary:
    """t · log Σ exp(cos / t) over the best pieces: the best piece, lifted by close seconds."""

    def summary(top: list[float]) -> float:
        m = top[0]
        return m + t * math.log(sum(math.exp((c - m) / t) for c in top))

    return summary


SUMMARIES: dict[str, Summary] = {
    "max": lambda top: top[0],
    "top2": lambda top: (top[0] + top[1]) / 2 if len(top) > 1 else top[0],
    "max+10%second": lambda top: top[0] + 0.1 * top[1] if len(top) > 1 else top[0],
    "soft0.01": _softmax(0.01),
    "soft0.02": _softmax(0.02),
}


def per_query(name: str, rules: Sequence[str]) -> dict[str, dict[str, dict[str, list[float]]]]:
    tops = by_question(name, "piece-top.json", "top")
    mix = RULES["mix50"]

    def ranker(summary: Summary) -> Ranker:
        def rank(key: QueryKey, vec: Leg, kw: Leg) -> list[str]:
            sims = {c: summary(t) for c, t in tops[key].items() if t}
            ranked: list[str] = mix(vec, kw, 200, sims)
            return ranked

        return rank

    return replay(name, {r: ranker(SUMMARIES[r]) for r in rules}, known=tops.__contains__)


def compare(names: Sequence[str], rule: str) -> dict[str, Any]:
    report: dict[str, Any] = {}
    for name in names:
        vals = per_query(name, ["max", rule])
        print(f"\n{name}: {rule} − max (the shipped best piece)")
        report[name] = paired_table(vals["max"], vals[rule])
    return report


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.studies.piece_shapes")
    p.add_argument("action", choices=("collect", "evaluate", "compare"))
    p.add_argument("datasets", nargs="+")
    p.add_argument("--rule", default="top2")
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    if args.action == "collect":
        for name in args.datasets:
            collect(name)
        return
    if args.action == "evaluate":
        for name in args.datasets:
            vals = per_query(name, list(SUMMARIES))
            for g in sorted(vals["max"], key=lambda g: (g != "all", g)):
                shown = [m for m in SHOW if m in vals["max"][g]]
                if len(vals["max"][g][shown[0]]) < 8:
                    continue
                print(f"\n{name} {g} (n={len(vals['max'][g][shown[0]])})")
                for r in SUMMARIES:
                    cells = "".join(f"{statistics.fmean(vals[r][g][m]):12.3f}" for m in shown)
                    print(f"  {r:14}{cells}")
        return
    report = compare(args.datasets, args.rule)
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
