"""Copy every stored vector of the benchmark stores under bench/work into one .npy file.

For `bench/studies/vector_options.py --data real`: the `embedding` blobs (little-endian float32)
of the
`chunks` of each `bench/work/<set>/<unit>/state/memory/bench-local.sqlite`, read-only, in rid
order, concatenated. Prints the count per store, and writes it beside the output
(`<out>.stores.json`: store path and count, in the order of the rows) so a row can be traced
back to its store and chunk (bench/studies/recall_misses.py).

    .venv/bin/python bench/studies/real_vectors.py bench/work/real.npy [--dims 384]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from pathlib import Path

import numpy as np

WORK = Path(__file__).parent.parent / "work"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--dims", type=int, default=384)
    args = parser.parse_args()
    blocks = []
    stores: list[dict[str, object]] = []
    for path in sorted(WORK.glob("*/*/state/memory/bench-local.sqlite")):
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = [
                r[0]
                for r in db.execute(
                    "SELECT embedding FROM chunks WHERE embedding IS NOT NULL ORDER BY rid"
                )
            ]
        finally:
            db.close()
        blocks.append(np.frombuffer(b"".join(rows), dtype="<f4").reshape(-1, args.dims))
        print(f"{path.relative_to(WORK)}: {len(rows)}")
        stores.append({"store": str(path.relative_to(WORK)), "vectors": len(rows)})
    matrix = np.concatenate(blocks)
    np.save(args.out, matrix)
    Path(f"{args.out}.stores.json").write_text(json.dumps(stores, indent=1) + "\n")
    print(f"{matrix.shape[0]} vectors -> {args.out}")


if __name__ == "__main__":
    main()
