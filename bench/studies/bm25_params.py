"""BM25's k1 and b: would other constants than FTS5's fixed 1.2 / 0.75 rank better?

FTS5's bm25() takes no k1 or b, so the keyword leg has always used 1.2 / 0.75. This study
recomputes every recorded query's keyword leg with other constants, from the store's own FTS5
index (per row: each term's offsets from an `fts5vocab` instance table, the row's token count;
N and the mean length over the rows), and replays the shipped z-score fusion over it and the
recorded vector leg (`bench/work/legs/<set>.json`, from `fusion_study collect`). With 1.2 / 0.75
it must give back the recorded bm25 of every matching chunk (checked: the largest difference is
printed). Scores are read on the two fixed halves of `fusion_study.half_of` (choose on one,
read on the other) and per category.

    python -m bench.studies.bm25_params scifact_train locomo ... [--k1 0.9,1.2,1.5] [--b 0.4,0.75]

Writes `bench/results/<stamp>-bm25-params.json` (per set, constants, mode, half and category:
means of the set's metrics).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import sqlean

from memlane.adapters.store.fts5_numbers import Tokenizer, phrase_count
from memlane.adapters.store.keyword_search import parse_phrases
from memlane.bench.cli import BENCH_DIR
from memlane.bench.studies.fusion_study import Leg, shipped
from memlane.bench.studies.replay_cells import (
    Cells,
    means,
    print_table,
    recorded_queries,
    result_path,
)
from memlane.bench.workspace import UnitPaths
from memlane.domain.keywords import build_fts_query

IDF_FLOOR = 1e-6
POOL = 200
KEEP = 50
BASE = (1.2, 0.75)  # FTS5's constants


class UnitIndex:
    """One store's FTS5 numbers: term -> rid -> offsets, row lengths, rid <-> chunk."""

    def __init__(self, store: Path, unit_id: str) -> None:
        self.unit_id = unit_id
        conn = sqlean.connect(f"file:{store}?mode=ro", uri=True)
        conn.execute("CREATE VIRTUAL TABLE temp.vi USING fts5vocab(main, chunks_fts, instance)")
        self.postings: dict[str, dict[int, list[int]]] = defaultdict(dict)
        self.length: dict[int, int] = defaultdict(int)
        for term, rid, offset in conn.execute("SELECT term, doc, offset FROM temp.vi"):
            self.postings[term].setdefault(rid, []).append(offset)
            self.length[rid] += 1
        self.where: dict[int, tuple[str, int, int, str]] = {
            rid: (path, start, end, cid)
            for rid, path, start, end, cid in conn.execute(
                "SELECT rid, path, start_line, end_line, id FROM chunks"
            )
        }
        conn.close()
        self.rows = len(self.where)
        self.avgdl = sum(self.length.values()) / max(1, self.rows)

    def phrase_rows(self, tokens: tuple[str, ...]) -> dict[int, int]:
        """rid -> the phrase's count in that row, for every row holding it."""
        first = self.postings.get(tokens[0], {})
        if len(tokens) == 1:
            return {rid: len(offs) for rid, offs in first.items()}
        out: dict[int, int] = {}
        for rid in first:
            pos = {t: self.postings.get(t, {}).get(rid, []) for t in tokens}
            count = phrase_count(pos, tokens)
            if count:
                out[rid] = count
        return out

    def scores(self, phrases: Sequence[dict[int, int]], k1: float, b: float) -> dict[int, float]:
        """bm25 evidence (positive) of every row matching a phrase, FTS5's formula otherwise."""
        total: dict[int, float] = defaultdict(float)
        n = self.rows
        for rows in phrases:
            idf = max(IDF_FLOOR, math.log((n - len(rows) + 0.5) / (len(rows) + 0.5)))
            for rid, f in rows.items():
                norm = k1 * (1 - b + b * self.length[rid] / self.avgdl)
                total[rid] += idf * f * (k1 + 1.0) / (f + norm)
        return total


def query_phrases(tokenizer: Tokenizer, text: str) -> list[tuple[str, ...]]:
    match = build_fts_query(text)
    phrases = parse_phrases(match) if match else None
    out: list[tuple[str, ...]] = []
    for phrase in phrases or []:
        pos = tokenizer.positions([(1, phrase)], None)[1]
        ordered = sorted((o, t) for t, offs in pos.items() for o in offs)
        if ordered:
            out.append(tuple(t for _, t in ordered))
    return out


def run(names: Sequence[str], grid: Sequence[tuple[float, float]]) -> dict[str, Any]:
    tokenizer = Tokenizer()
    fuse = shipped("zscore", 0.5, 0.5)
    report: dict[str, Any] = {}
    for name in names:
        started = time.monotonic()
        cells: Cells = {}
        worst = 0.0
        index: UnitIndex | None = None
        for found in recorded_queries(name):
            if index is None or index.unit_id != found.unit.unit_id:
                paths = UnitPaths.for_unit(BENCH_DIR / "work", name, found.unit.unit_id)
                index = UnitIndex(paths.store_path("local"), found.unit.unit_id)
            vec: Leg = [tuple(e) for e in found.legs["vector"]]
            recorded = {e[4]: e[3] for e in found.legs["keyword"]}
            phrases = query_phrases(tokenizer, found.query.text)
            phrase_rows = [index.phrase_rows(p) for p in phrases]
            for k1, b in grid:
                ev = index.scores(phrase_rows, k1, b)
                if (k1, b) == BASE:
                    for rid, s in ev.items():
                        worst = max(worst, abs(recorded.get(index.where[rid][3], math.inf) - s))
                    worst = max(worst, float(len(recorded) != len(ev)))
                kw: Leg = [(*index.where[r][:3], s, index.where[r][3]) for r, s in ev.items()]
                where = {e[4]: (e[0], e[1], e[2]) for e in [*vec, *kw]}
                rankings = {
                    "keyword": [e[4] for e in sorted(kw, key=lambda e: (-e[3], e[4]))[:KEEP]],
                    "hybrid": fuse(vec, kw, POOL)[:KEEP],
                }
                found.file(cells, f"{k1}/{b}", rankings, where)
        report[name] = {
            "check_worst_abs_diff_at_1.2/0.75": worst,
            "seconds": round(time.monotonic() - started, 1),
            "cells": means(cells),
        }
        print(f"\n{name}: check |Δ| at 1.2/0.75 = {worst:.2e}, {report[name]['seconds']} s")
        print_table(report[name]["cells"], "1.2/0.75", ("keyword", "hybrid"))
    return report


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.studies.bm25_params")
    p.add_argument("datasets", nargs="+")
    p.add_argument("--k1", default="0.6,0.9,1.2,1.5,2.0")
    p.add_argument("--b", default="0.3,0.5,0.75,0.9")
    p.add_argument("--out", default="")
    args = p.parse_args()
    grid = [(float(k), float(b)) for k in args.k1.split(",") for b in args.b.split(",")]
    if BASE not in grid:
        grid.insert(0, BASE)
    report = run(args.datasets, grid)
    out = result_path(args.out, "bm25-params")
    out.write_text(json.dumps(report, indent=1))
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
