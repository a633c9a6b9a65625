"""Benchmark aid: which true top-10 neighbours the code engine's stages miss on real vectors, and
why (their exact, Hamming and int8 ranks, their distance from the corpus mean, their text).

Reads a `bench/studies/vector_options.py --data real` work dir and the .npy it was made from (with
the
`<npy>.stores.json` written by bench/studies/real_vectors.py, to trace a row to its store and
chunk, in
copies of the stores whose rows have not been renewed since: checked);
re-draws the same hold-out as vector_options (seed 7, checked against the work dir's corpus).

    .venv/bin/python bench/studies/recall_misses.py bench/work/vector-options/real-100000 \\
        bench/work/real.npy --stores-root bench/work-pristine --pool 200 --bits-candidates 4000

Prints one line per miss and a count per store of the query; writes nothing.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from collections import Counter
from pathlib import Path

import numpy as np

from memlane.bench.studies import vector_options

WORK = Path(__file__).parent.parent / "work"


def _texts(root: Path, stores: list[dict[str, object]], raw: np.ndarray) -> list[tuple[str, str]]:
    """(store, chunk text) of every row of the .npy, in its order, read from the stores under
    `root`; stops when a store's vectors are not the .npy's rows (a re-sync renews rids)."""
    out: list[tuple[str, str]] = []
    for entry in stores:
        path = root / str(entry["store"])
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = db.execute(
                "SELECT text, embedding FROM chunks WHERE embedding IS NOT NULL ORDER BY rid"
            ).fetchall()
        finally:
            db.close()
        held = raw[len(out) : len(out) + len(rows)].astype("<f4").tobytes()
        if len(rows) != entry["vectors"] or b"".join(r[1] for r in rows) != held:
            raise SystemExit(f"{path}: not the vectors (or not in the order) of the .npy")
        name = str(entry["store"]).split("/")[0]
        out += [(name, str(r[0])) for r in rows]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("work", type=Path)
    parser.add_argument("npy", type=Path)
    parser.add_argument("--stores-root", type=Path, default=WORK, help="where the stores are")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--pool", type=int, default=vector_options.RESCORE_FLOOR)
    parser.add_argument("--bits-candidates", type=int, default=vector_options.BITS_CANDIDATES)
    args = parser.parse_args()
    vector_options.RESCORE_FLOOR, vector_options.BITS_CANDIDATES = args.pool, args.bits_candidates
    raw = np.load(args.npy)
    pick = np.random.default_rng(7).permutation(len(raw))  # vector_options.prepare's hold-out
    corpus, queries = np.load(args.work / "f32.npy"), np.load(args.work / "queries.npy")
    truth = np.load(args.work / "truth.npy")
    if not np.allclose(corpus[:50], vector_options._normalise(raw[pick[args.queries :]][:50])):
        raise SystemExit("the work dir was not made from this .npy (or with another hold-out)")
    stores = json.loads(Path(f"{args.npy}.stores.json").read_text())
    texts = _texts(args.stores_root, stores, raw)
    searcher = vector_options.Searcher(args.work, "bits", 0)
    mean = searcher.mean
    bits = np.packbits(corpus > mean, axis=1)
    from_mean = np.linalg.norm(corpus - mean, axis=1)
    missed: Counter[str] = Counter()
    asked: Counter[str] = Counter()
    for i, q in enumerate(queries):
        store = texts[pick[i]][0]
        asked[store] += len(truth[i])
        got = set(searcher.top(q, len(truth[i])).tolist())
        exact = corpus @ q
        hamming = np.unpackbits(bits ^ np.packbits(q > mean), axis=1).sum(axis=1)
        estimate = searcher.codes.astype(np.float32) @ (q * searcher.scale)
        for m in sorted(set(truth[i].tolist()) - got):
            missed[store] += 1
            where, text = texts[pick[args.queries + m]]
            print(
                f"query {i} ({store}) misses a {where} row: exact rank "
                f"{int((exact > exact[m]).sum())} (cosine {exact[m]:.4f}, 10th "
                f"{np.sort(exact)[-len(truth[i])]:.4f}), Hamming rank "
                f"{int((hamming < hamming[m]).sum())}, int8 rank "
                f"{int((estimate > estimate[m]).sum())}, |v - mean| {from_mean[m]:.3f} "
                f"(corpus min {from_mean.min():.3f}, median {np.median(from_mean):.3f}), "
                f"text {text[:60]!r}"
            )
    for store, n in sorted(asked.items()):
        print(f"{store}: {missed[store]} missed of {n} (recall@10 {1 - missed[store] / n:.4f})")


if __name__ == "__main__":
    main()
