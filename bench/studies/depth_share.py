"""Benchmark: vector recall@10 of the code engine's stages against the share of rows the bit stage
keeps, on real vectors, at several corpus sizes (random subsets of one set of vectors).

Why: on the ~14k real vectors we hold, the store's bit stage keeps 4,000 rows for a top-10, a
third of them, so recall there says little about a million chunks, where the same 4,000 are
0.4 %. Keeping 0.4 % of 14k rows is one way to ask the question, but it is only fair if the share
needed for a given recall does not grow with the corpus; this bench measures that share at 1/8,
1/4, 1/2 and all of the vectors, so the trend is visible.

The stages are the store's (adapters/store/vector_code_index.py): sign bits of (vector - corpus
mean), every row at a Hamming distance up to the cut that covers `keep` rows (ties kept, as
`_smallest` does), then the int8 estimate keeps the pool (200 for a top-10) when more rows than
that were kept, then exact float32 cosines. Codes are built per subset (its own mean and scale).

    .venv/bin/python bench/studies/depth_share.py bench/work/vector-options/real-100000

reads f32.npy and queries.npy written by `bench/studies/vector_options.py --data real`; writes
bench/results/<out>.json.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

POOL = 200  # rows re-scored exactly for a top-10 (max(2 * 10, 200))
STORE_KEEP_AT_1M = 4000 / 1_000_000  # the bit stage's share for a top-10 at 1M chunks


class Codes:
    """The store's codes of one corpus: sign bits around the mean, int8 per-dimension scale."""

    def __init__(self, corpus: np.ndarray) -> None:
        self.corpus = corpus
        self.mean = corpus.mean(axis=0)
        self.bits = np.packbits(corpus > self.mean, axis=1)
        scale = np.abs(corpus).max(axis=0) / 127.0
        scale[scale == 0] = 1.0
        self.scale = scale.astype(np.float32)
        self.int8 = np.rint(corpus / self.scale).astype(np.int8)

    def top(self, q: np.ndarray, k: int, keep: int) -> tuple[np.ndarray, int]:
        """(top-k rows, rows the bit stage kept) for the query `q`."""
        dist = np.unpackbits(self.bits ^ np.packbits(q > self.mean), axis=1).sum(axis=1)
        cut = np.sort(dist)[min(keep, len(dist)) - 1]
        rows = np.flatnonzero(dist <= cut)  # ties at the cut are kept, as the store does
        kept = len(rows)
        if len(rows) > POOL:
            estimate = self.int8[rows].astype(np.float32) @ (q * self.scale)
            rows = rows[np.argpartition(-estimate, POOL - 1)[:POOL]]
        exact = self.corpus[rows] @ q
        return rows[np.argsort(-exact, kind="stable")[:k]], kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("work", type=Path)
    parser.add_argument("--fractions", type=float, nargs="+", default=[0.125, 0.25, 0.5, 1.0])
    parser.add_argument(
        "--shares", type=float, nargs="+", default=[0.004, 0.008, 0.016, 0.032, 0.064, 0.128]
    )
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--out", default="depth_share-real")
    args = parser.parse_args()
    full = np.load(args.work / "f32.npy")
    queries = np.load(args.work / "queries.npy")
    rng = np.random.default_rng(11)
    order = rng.permutation(len(full))
    result: dict[str, Any] = {
        "work": str(args.work),
        "queries": len(queries),
        "k": args.k,
        "pool": POOL,
        "rows": {},
    }
    for fraction in args.fractions:
        corpus = full[np.sort(order[: round(fraction * len(full))])]
        codes = Codes(corpus)
        n = len(corpus)
        truth = [set(np.argsort(-(corpus @ q), kind="stable")[: args.k].tolist()) for q in queries]
        row: dict[str, Any] = {}
        for share in args.shares:
            keep = max(args.k, math.ceil(share * n))
            found, kept = 0, 0
            for q, want in zip(queries, truth, strict=True):
                got, rows = codes.top(q, args.k, keep)
                found += len(want & set(got.tolist()))
                kept += rows
            row[str(share)] = {
                "keep": keep,
                "mean_rows_kept": round(kept / len(queries), 1),
                "recall_at_10": round(found / (args.k * len(queries)), 4),
            }
        result["rows"][str(n)] = row
        print(n, json.dumps(row), flush=True)
    result["store_share_at_1m"] = STORE_KEEP_AT_1M
    target = Path(__file__).parent.parent / "results" / f"{args.out}.json"
    target.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written {target}")


if __name__ == "__main__":
    main()
