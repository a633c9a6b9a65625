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

import numpy as np

from memlane.application.query_focus import vector_query
from memlane.bench import metrics
from memlane.bench.cli import BENCH_DIR
from memlane.bench.datasets import registry
from memlane.bench.runner import RunOptions, limited_units, score_query
from memlane.bench.studies.fusion_study import LEGS_DIR, half_of, opened_unit
from memlane.bench.studies.piece_vectors import (
    CACHE,
    RULES,
    SHOW,
    PieceCache,
    _unit_chunks,
    pieces_of,
)

TOP = 3  # piece cosines kept per candidate, best first

Summary = Callable[[list[float]], float]


def collect(name: str) -> None:
    dataset = registry.load(name, None, registry.DEFAULT_DATA_ROOT)
    legs = {(r["unit"], r["qid"]): r for r in json.loads((LEGS_DIR / f"{name}.json").read_text())}
    out: list[dict[str, Any]] = []
    for unit in limited_units(dataset, RunOptions(work_dir=BENCH_DIR / "work")):
        if not any((unit.unit_id, q.qid) in legs for q in unit.queries):
            continue
        with opened_unit(name, unit, BENCH_DIR / "work") as (manager, store, provider, db_path):
            ids: list[str] = []
            owner: list[int] = []
            texts: list[str] = []
            for chunk_id, text, _ in _unit_chunks(db_path):
                ids.append(chunk_id)
                for piece in pieces_of(text) or [text]:
                    owner.append(len(ids) - 1)
                    texts.append(piece)
            matrix = PieceCache(CACHE, provider.key).vectors(texts, provider.embed_documents)
            matrix /= np.linalg.norm(matrix, axis=1, keepdims=True) + 1e-12
            rows_of: dict[str, list[int]] = defaultdict(list)
            for row, i in enumerate(owner):
                rows_of[ids[i]].append(row)
            for q in unit.queries:
                rec = legs.get((unit.unit_id, q.qid))
                if rec is None:
                    continue
                asked = vector_query(store, q.text, share=manager.settings.query.common_word_share)
                qv = np.asarray(provider.embed_query(asked.text), dtype=np.float32)
                qv /= np.linalg.norm(qv) + 1e-12
                sims = matrix @ qv
                cands = {e[4] for e in rec["vector"]} | {e[4] for e in rec["keyword"][:400]}
                out.append(
                    {
                        "unit": unit.unit_id,
                        "qid": q.qid,
                        "top": {
                            c: sorted((float(sims[r]) for r in rows_of[c]), reverse=True)[:TOP]
                            for c in cands
                            if c in rows_of
                        },
                    }
                )
        print(f"{name}/{unit.unit_id}: {len(texts)} pieces", flush=True)
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
    dataset = registry.load(name, None, registry.DEFAULT_DATA_ROOT)
    legs = {(r["unit"], r["qid"]): r for r in json.loads((LEGS_DIR / f"{name}.json").read_text())}
    tops = {
        (r["unit"], r["qid"]): r["top"]
        for r in json.loads((LEGS_DIR / f"{name}.piece-top.json").read_text())
    }
    mix = RULES["mix50"]
    vals: dict[str, dict[str, dict[str, list[float]]]] = {
        r: defaultdict(lambda: defaultdict(list)) for r in rules
    }
    for unit in dataset.units():
        doc_of_path = unit.doc_of_path()
        for q in unit.queries:
            key = (unit.unit_id, q.qid)
            if key not in legs or key not in tops:
                continue
            vec = [tuple(e) for e in legs[key]["vector"]]
            kw = [tuple(e) for e in legs[key]["keyword"]]
            where = {e[4]: (e[0], e[1], e[2]) for e in [*vec, *kw]}
            groups = ["all", f"half {half_of(key)}"]
            if q.category != "all":
                groups.append(f"cat {q.category}")
            for rname in rules:
                summary = SUMMARIES[rname]
                sims = {c: summary(t) for c, t in tops[key].items() if t}
                ranked = mix(vec, kw, 200, sims)[:50]
                scores = score_query(
                    q, [where[c] for c in ranked], doc_of_path, turn_level=dataset.turn_level
                )
                for g in groups:
                    for m in SHOW:
                        if m in scores:
                            vals[rname][g][m].append(scores[m])
    return vals


def compare(names: Sequence[str], rule: str) -> dict[str, Any]:
    report: dict[str, Any] = {}
    for name in names:
        vals = per_query(name, ["max", rule])
        report[name] = {}
        print(f"\n{name}: {rule} − max (the shipped best piece)")
        for g in sorted(vals["max"], key=lambda g: (g != "all", g)):
            for m, b in vals["max"][g].items():
                if len(b) < 8:
                    continue
                c = metrics.paired_bootstrap(vals[rule][g][m], b)
                report[name].setdefault(g, {})[m] = {
                    "base": statistics.fmean(b),
                    "rule": statistics.fmean(vals[rule][g][m]),
                    "diff": c.mean_diff,
                    "ci": [c.ci_low, c.ci_high],
                    "p": c.p_value,
                    "n": c.n,
                }
                print(
                    f"  {g:8} {m:15} n={c.n:5} {statistics.fmean(b):.3f} -> "
                    f"{statistics.fmean(vals[rule][g][m]):.3f} {c.mean_diff:+.3f} "
                    f"[{c.ci_low:+.3f}, {c.ci_high:+.3f}] p={c.p_value:.3f}"
                )
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
