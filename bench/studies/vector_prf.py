"""Vector pseudo-relevance feedback (Rocchio), replayed over recorded legs: does moving the query
vector towards the mean of the first k fused hits (q + beta * mean, renormalised) lift LoCoMo?

The recorded cosines give c . q; the chunk vectors come from the unit's store, so the new cosine
of every recorded chunk is (c . q + beta * c . m) / |q + beta * m| without embedding anything.
Fused again with the same keyword leg (z-score 0.5 / 0.5), scored on the tune / held-out parts
of bench/studies/rerank_study.py. A probe, not a shipped rule (rejected: bench/HISTORY.md).

    python -m bench.studies.fusion_study collect locomo     # once
    python -m bench.studies.vector_prf locomo 0.3:3 0.5:3 0.3:5 1.0:3    # beta:k variants
"""

from __future__ import annotations

import collections
import json
import sqlite3
import statistics
import sys
from typing import Any

import numpy as np

from memlane.bench.cli import BENCH_DIR
from memlane.bench.datasets import registry
from memlane.bench.runner import score_query
from memlane.bench.studies.fusion_study import LEGS_DIR
from memlane.bench.studies.rerank_study import POOL, _candidates, base_fusion, part_of
from memlane.bench.workspace import UnitPaths
from memlane.domain.scoring import zscore_merge


def main() -> None:
    name = sys.argv[1]
    variants = [(float(b), int(k)) for b, k in (v.split(":") for v in sys.argv[2:])]
    ds = registry.load(name, None, registry.DEFAULT_DATA_ROOT)
    recs = {(r["unit"], r["qid"]): r for r in json.loads((LEGS_DIR / f"{name}.json").read_text())}
    rows: dict[tuple[Any, ...], list[tuple[str, str, dict[str, float]]]] = collections.defaultdict(
        list
    )
    for ui, unit in enumerate(ds.units()):
        paths = UnitPaths.for_unit(BENCH_DIR / "work", name, unit.unit_id)
        conn = sqlite3.connect(f"file:{paths.store_path('local')}?mode=ro", uri=True)
        data = conn.execute(
            "select id, text, embedding from chunks where embedding is not null"
        ).fetchall()
        texts = {d[0]: d[1] for d in data}
        vecs = {d[0]: np.frombuffer(d[2], dtype=np.float32) for d in data}
        vecs = {k: v / np.linalg.norm(v) for k, v in vecs.items()}
        dop = unit.doc_of_path()
        for q in unit.queries:
            rec = recs.get((unit.unit_id, q.qid))
            if rec is None:
                continue
            part = part_of(name, ui, (unit.unit_id, q.qid))
            fused = base_fusion(rec, texts)

            def score(f: list[Any], q: Any = q, dop: Any = dop) -> dict[str, float]:
                hits = [(x.path, x.start_line, x.end_line) for x in f[:50]]
                return score_query(q, hits, dop, turn_level=ds.turn_level)

            rows[("base",)].append((part, q.category, score(fused)))
            kw = _candidates(rec["keyword"], texts, keyword=True)
            ex = len(rec["keyword"]) < POOL
            for b, k in variants:
                top = [f.chunk_id for f in fused[:k] if f.chunk_id in vecs]
                if not top:
                    rows[(b, k)].append((part, q.category, score(fused)))
                    continue
                m = np.mean([vecs[c] for c in top], axis=0)
                qm = float(
                    np.mean([next((e[3] for e in rec["vector"] if e[4] == c), 0.0) for c in top])
                )
                norm = (1 + 2 * b * qm + b * b * float(m @ m)) ** 0.5
                vec2 = [
                    (e[0], e[1], e[2], (e[3] + b * float(vecs[e[4]] @ m)) / norm, e[4])
                    for e in rec["vector"]
                    if e[4] in vecs
                ]
                v = _candidates(vec2, texts, keyword=False)
                f2 = zscore_merge(v, kw, vector_weight=0.5, text_weight=0.5, keyword_exhaustive=ex)
                rows[(b, k)].append((part, q.category, score(f2)))
        conn.close()
    cols = [
        c
        for c in ("recall_all@5", "ndcg@10", "turn_recall@L5", "recall@5")
        if c in rows[("base",)][0][2]
    ]
    for part in ("tune", "held"):
        for cat in ["all", *sorted({c for _, c, _ in rows[("base",)]} - {"all"})]:
            print(part, cat)
            for key, vals in rows.items():
                sel = [s for p, c, s in vals if p == part and cat in ("all", c)]
                if len(sel) < 8:
                    continue
                print(
                    "  ",
                    key,
                    len(sel),
                    " ".join(f"{c} {statistics.fmean(s[c] for s in sel):.3f}" for c in cols),
                )


if __name__ == "__main__":
    main()
