"""Probe: does a second keyword round (pseudo-relevance feedback) lift LoCoMo session recall?

For each LoCoMo question: rank with the default fusion over the recorded legs (see
`fusion_study collect`), take the words of the first `--feedback` chunks that are rare in that
conversation (document frequency below `--max-df` of its chunks, not stop words, not in the
question), add the `--terms` most frequent of them to the question, run the keyword leg again
through the store, and fuse it with the same vector leg. Prints the metrics of both rounds,
overall and for multi-hop questions (category 1). A probe, not a shipped rule.

    .venv/bin/python -m bench.studies.fusion_study collect locomo    # once
    .venv/bin/python bench/studies/prf_probe.py [--feedback 3] [--terms 5] [--max-df 0.1]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from collections import Counter
from typing import Any

from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.bench.cli import BENCH_DIR
from memlane.bench.datasets import registry
from memlane.bench.runner import score_query
from memlane.bench.studies.fusion_study import LEGS_DIR, RULES
from memlane.bench.workspace import UnitPaths
from memlane.domain.keywords import STOP_WORDS, build_fts_query
from memlane.domain.sources import ALL_SOURCES

WORD = re.compile(r"[a-z][a-z']{3,}")
SHOW = ("recall_all@5", "ndcg@10", "turn_recall@L5", "turn_recall@L10")


def _words(text: str) -> list[str]:
    return [w for w in WORD.findall(text.lower()) if w not in STOP_WORDS]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--feedback", type=int, default=3)
    p.add_argument("--terms", type=int, default=5)
    p.add_argument("--max-df", type=float, default=0.1)
    args = p.parse_args()
    dataset = registry.load("locomo", None, registry.DEFAULT_DATA_ROOT)
    records = {(r["unit"], r["qid"]): r for r in json.loads((LEGS_DIR / "locomo.json").read_text())}
    fuse = RULES["z50"]
    rows: dict[str, list[tuple[str, dict[str, float]]]] = {"first": [], "second": []}
    for unit in dataset.units():
        paths = UnitPaths.for_unit(BENCH_DIR / "work", "locomo", unit.unit_id)
        store = SqliteIndexStore.open(paths.store_path("local"))
        with store.database.read() as conn:
            texts = {str(i): str(t) for i, t in conn.exec_driver_sql("SELECT id, text FROM chunks")}
        df = Counter(w for t in texts.values() for w in set(_words(t)))
        rare = {w for w, n in df.items() if n <= args.max_df * len(texts)}
        doc_of_path = unit.doc_of_path()
        for q in unit.queries:
            rec = records[(unit.unit_id, q.qid)]
            vec: list[Any] = [tuple(e) for e in rec["vector"]]
            kw: list[Any] = [tuple(e) for e in rec["keyword"]]
            where = {e[4]: (e[0], e[1], e[2]) for e in [*vec, *kw]}
            first = fuse(vec, kw, 200)
            asked = set(_words(q.text))
            counts = Counter(
                w
                for cid in first[: args.feedback]
                for w in _words(texts.get(cid, ""))
                if w in rare and w not in asked
            )
            extra = [w for w, _ in counts.most_common(args.terms)]
            match = build_fts_query(q.text + " " + " ".join(extra))
            kw2 = store.search_keyword(match, sources=ALL_SOURCES, limit=200) if match else []
            kw2_rows: list[Any] = [
                (c.path, c.start_line, c.end_line, -c.score, c.chunk_id) for c in kw2
            ]
            where.update({e[4]: (e[0], e[1], e[2]) for e in kw2_rows})
            second = fuse(vec, kw2_rows, 200)
            for name, ranked in (("first", first), ("second", second)):
                hits = [where[c] for c in ranked[:50]]
                scores = score_query(q, hits, doc_of_path, turn_level=True)
                rows[name].append((str(q.category), scores))
        store.close()
        print(f"{unit.unit_id}: {len(unit.queries)} questions", flush=True)
    for group, cats in (("all", None), ("multi-hop (1)", {"1"})):
        print(f"\n{group}")
        for name, vals in rows.items():
            picked = [s for c, s in vals if cats is None or c in cats]
            means = " ".join(f"{m} {statistics.fmean(s[m] for s in picked):.3f}" for m in SHOW)
            print(f"  {name:7} n={len(picked):5} {means}")


if __name__ == "__main__":
    main()
