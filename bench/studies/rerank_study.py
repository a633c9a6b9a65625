"""Rerank study: what can be done after fusion, without a language model, for the weak categories.

Replays the recorded legs of `fusion_study collect` through the shipped z-score fusion (with the
pipeline's `keyword_exhaustive` flag, so the baseline reproduces the harness), then through
candidate re-rankers, and scores every variant with the harness's metrics on two fixed parts of
each set: LoCoMo conversations 0-4 (tune) and 5-9 (held out); every other set half by half by
the fixed hash of `fusion_study.half_of` (A tune, B held out).

    python -m bench.studies.fusion_study collect locomo jaquad_dev ...    # once
    python -m bench.studies.rerank_study locomo jaquad_dev ... [--rules base,session_pool]

The re-rankers named `domain:*` call the shipped domain functions, so what is measured is what
ships; the others are prototypes, reported in bench/RESULTS.md and not shipped.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
from collections.abc import Callable, Sequence
from typing import Any

from memlane.bench import metrics
from memlane.bench.cli import BENCH_DIR
from memlane.bench.datasets import registry
from memlane.bench.runner import score_query
from memlane.bench.studies.fusion_study import LEGS_DIR, half_of
from memlane.bench.workspace import UnitPaths
from memlane.domain.chunks import ChunkId
from memlane.domain.scoring import Fused, zscore_merge
from memlane.domain.search import Candidate

POOL = 200
KEEP = 50
LOCOMO_TUNE = 5  # conversations 0-4 tune, 5-9 held out
SHOW = ("recall_all@5", "recall_any@5", "ndcg@10", "recall@5", "turn_recall@L5", "turn_recall@L10")

Rerank = Callable[[list[Fused], str], list[Fused]]


def _candidates(
    leg: Sequence[Sequence[Any]], texts: dict[str, str], *, keyword: bool
) -> list[Candidate]:
    top = sorted(leg, key=lambda e: -float(e[3]))[:POOL]
    return [
        Candidate(
            chunk_id=ChunkId(cid),
            source="memory",
            path=path,
            start_line=start,
            end_line=end,
            text=texts.get(cid, ""),
            score=-score if keyword else score,
        )
        for path, start, end, score, cid in top
    ]


def base_fusion(rec: dict[str, Any], texts: dict[str, str]) -> list[Fused]:
    """The pipeline's default fusion of the recorded legs (z-score 0.5 / 0.5)."""
    vec = _candidates(rec["vector"], texts, keyword=False)
    kw = _candidates(rec["keyword"], texts, keyword=True)
    exhaustive = len(rec["keyword"]) < POOL
    return zscore_merge(vec, kw, vector_weight=0.5, text_weight=0.5, keyword_exhaustive=exhaustive)


def unit_texts(name: str, unit_id: str) -> dict[str, str]:
    paths = UnitPaths.for_unit(BENCH_DIR / "work", name, unit_id)
    conn = sqlite3.connect(f"file:{paths.store_path('local')}?mode=ro", uri=True)
    try:
        return {str(i): str(t) for i, t in conn.execute("SELECT id, text FROM chunks")}
    finally:
        conn.close()


def part_of(name: str, unit_index: int, key: tuple[str, str]) -> str:
    if name == "locomo":
        return "tune" if unit_index < LOCOMO_TUNE else "held"
    return "tune" if half_of(key) == "A" else "held"


RERANKERS: dict[str, Rerank] = {"base": lambda fused, _query: fused}


def register(name: str, rerank: Rerank) -> None:
    RERANKERS[name] = rerank


Row = tuple[str, str, dict[str, float]]  # part, category, scores


def run_set(name: str, rules: Sequence[str]) -> dict[str, list[Row]]:
    dataset = registry.load(name, None, registry.DEFAULT_DATA_ROOT)
    by_key = {(r["unit"], r["qid"]): r for r in json.loads((LEGS_DIR / f"{name}.json").read_text())}
    rows: dict[str, list[Row]] = {r: [] for r in rules}
    for index, unit in enumerate(dataset.units()):
        texts = unit_texts(name, unit.unit_id)
        doc_of_path = unit.doc_of_path()
        for q in unit.queries:
            rec = by_key.get((unit.unit_id, q.qid))
            if rec is None:
                continue
            fused = base_fusion(rec, texts)
            part = part_of(name, index, (unit.unit_id, q.qid))
            for rule in rules:
                ranked = RERANKERS[rule](fused, q.text)[:KEEP]
                hits: list[metrics.Hit] = [(f.path, f.start_line, f.end_line) for f in ranked]
                scores = score_query(q, hits, doc_of_path, turn_level=dataset.turn_level)
                rows[rule].append((part, str(q.category), scores))
    return rows


def table(name: str, rows: dict[str, list[Row]], by_category: bool) -> None:
    first = next(iter(rows.values()))
    cols = [m for m in SHOW if first and m in first[0][2]]
    groups = ["all"]
    if by_category:
        groups += sorted({c for _, c, _ in first if c != "all"})
    for part in ("tune", "held"):
        for group in groups:
            picked = [i for i, (p, c, _) in enumerate(first) if p == part and group in ("all", c)]
            if len(picked) < 8:
                continue
            print(f"\n{name} {part} cat={group} n={len(picked)}")
            print(f"{'rule':22}" + "".join(f"{c:>15}" for c in cols))
            for rule, vals in rows.items():
                means = [statistics.fmean(vals[i][2][c] for i in picked) for c in cols]
                base = [statistics.fmean(rows["base"][i][2][c] for i in picked) for c in cols]
                print(
                    f"{rule:22}"
                    + "".join(f"{m:8.3f}({m - b:+.3f})" for m, b in zip(means, base, strict=True))
                )


def main() -> None:
    from memlane.bench.studies.rerank_rules import RULES

    RERANKERS.update(RULES)

    p = argparse.ArgumentParser(prog="python -m bench.studies.rerank_study")
    p.add_argument("datasets", nargs="+")
    p.add_argument("--rules", default=None)
    p.add_argument("--by-category", action="store_true")
    args = p.parse_args()
    rules = ["base", *[r for r in (args.rules or ",".join(RERANKERS)).split(",") if r != "base"]]
    for name in args.datasets:
        table(name, run_set(name, rules), args.by_category)


if __name__ == "__main__":
    main()
