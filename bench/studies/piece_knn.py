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
import statistics
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memlane.application.query_focus import vector_query
from memlane.bench import metrics
from memlane.bench.cli import BENCH_DIR
from memlane.bench.datasets import registry
from memlane.bench.runner import RunOptions, limited_units, score_query
from memlane.bench.studies.fusion_study import LEGS_DIR, half_of, opened_unit
from memlane.bench.studies.piece_vectors import CACHE, RULES, SHOW, PieceCache, pieces_of
from memlane.domain.index_meta import vector_label

DEPTH = 200  # chunks recorded per question, by their best piece


def collect(name: str) -> None:
    dataset = registry.load(name, None, registry.DEFAULT_DATA_ROOT)
    legs = {(r["unit"], r["qid"]): r for r in json.loads((LEGS_DIR / f"{name}.json").read_text())}
    out: list[dict[str, Any]] = []
    for unit in limited_units(dataset, RunOptions(work_dir=BENCH_DIR / "work")):
        if not any((unit.unit_id, q.qid) in legs for q in unit.queries):
            continue
        with opened_unit(name, unit, BENCH_DIR / "work") as (manager, store, provider, db_path):
            import sqlean

            db = sqlean.connect(str(db_path))
            rows = db.execute(
                "SELECT id, path, start_line, end_line, text FROM chunks WHERE source = 'memory'"
            ).fetchall()
            db.close()
            owner: list[int] = []
            texts: list[str] = []
            for i, (_, _, _, _, text) in enumerate(rows):
                for piece in pieces_of(text) or [text]:
                    owner.append(i)
                    texts.append(piece)
            matrix = PieceCache(CACHE, provider.key).vectors(texts, provider.embed_documents)
            matrix /= np.linalg.norm(matrix, axis=1, keepdims=True) + 1e-12
            owners = np.asarray(owner)
            label = vector_label(provider.model, provider.key)
            for q in unit.queries:
                rec = legs.get((unit.unit_id, q.qid))
                if rec is None:
                    continue
                asked = vector_query(store, q.text, share=manager.settings.query.common_word_share)
                qvec = provider.embed_query(asked.text)
                qv = np.asarray(qvec, dtype=np.float32)
                qv /= np.linalg.norm(qv) + 1e-12
                best = np.full(len(rows), -1.0, dtype=np.float32)
                np.maximum.at(best, owners, matrix @ qv)
                fetched = {e[4] for e in rec["vector"]} | {e[4] for e in rec["keyword"][:400]}
                order = [i for i in np.argsort(-best) if rows[i][0] not in fetched][:DEPTH]
                cosine = {
                    c.chunk_id: c.score
                    for c in store.search_vector(
                        qvec, model=label, sources=manager.settings.sources, limit=100_000
                    )
                }
                out.append(
                    {
                        "unit": unit.unit_id,
                        "qid": q.qid,
                        "extra": [
                            [
                                rows[i][1],
                                rows[i][2],
                                rows[i][3],
                                cosine.get(rows[i][0], -1.0),
                                rows[i][0],
                                float(best[i]),
                            ]
                            for i in order
                        ],
                    }
                )
        print(f"{name}/{unit.unit_id}: {len(texts)} pieces", flush=True)
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
    dataset = registry.load(name, None, registry.DEFAULT_DATA_ROOT)
    legs = {(r["unit"], r["qid"]): r for r in json.loads((LEGS_DIR / f"{name}.json").read_text())}
    pieces = {
        (r["unit"], r["qid"]): r["maxsim"]
        for r in json.loads((LEGS_DIR / f"{name}.pieces.json").read_text())
    }
    extra = {
        (r["unit"], r["qid"]): r["extra"]
        for r in json.loads((LEGS_DIR / f"{name}.piece-knn.json").read_text())
    }
    vals: dict[int, dict[str, dict[str, list[float]]]] = {
        w: defaultdict(lambda: defaultdict(list)) for w in widths
    }
    for unit in dataset.units():
        doc_of_path = unit.doc_of_path()
        for q in unit.queries:
            key = (unit.unit_id, q.qid)
            if key not in legs or key not in pieces or key not in extra:
                continue
            vec = [tuple(e) for e in legs[key]["vector"]]
            kw = [tuple(e) for e in legs[key]["keyword"]]
            where = {e[4]: (e[0], e[1], e[2]) for e in [*vec, *kw, *extra[key]]}
            groups = ["all", f"half {half_of(key)}"]
            if q.category != "all":
                groups.append(f"cat {q.category}")
            for w in widths:
                ranked = _widened(w)(vec, kw, 200, pieces[key], extra[key])[:50]
                scores = score_query(
                    q, [where[c] for c in ranked], doc_of_path, turn_level=dataset.turn_level
                )
                for g in groups:
                    for m in SHOW:
                        if m in scores:
                            vals[w][g][m].append(scores[m])
    return vals


def compare(names: Sequence[str], widen: int) -> dict[str, Any]:
    report: dict[str, Any] = {}
    for name in names:
        vals = per_query(name, [0, widen])
        report[name] = {}
        print(f"\n{name}: mix50 + {widen} chunks found by their best piece − mix50")
        for g in sorted(vals[0], key=lambda g: (g != "all", g)):
            for m, b in vals[0][g].items():
                if len(b) < 8:
                    continue
                c = metrics.paired_bootstrap(vals[widen][g][m], b)
                report[name].setdefault(g, {})[m] = {
                    "base": statistics.fmean(b),
                    "rule": statistics.fmean(vals[widen][g][m]),
                    "diff": c.mean_diff,
                    "ci": [c.ci_low, c.ci_high],
                    "p": c.p_value,
                    "n": c.n,
                }
                print(
                    f"  {g:8} {m:15} n={c.n:5} {statistics.fmean(b):.3f} -> "
                    f"{statistics.fmean(vals[widen][g][m]):.3f} {c.mean_diff:+.3f} "
                    f"[{c.ci_low:+.3f}, {c.ci_high:+.3f}] p={c.p_value:.3f}"
                )
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
