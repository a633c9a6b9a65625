"""Benchmark: SQLite page cache and mmap sizes against store latency (issue #3).

Runs `bench/store_bench.py`'s workload once per (cache_size KiB, mmap_size bytes) pair, each in a
fresh process with the engine constants patched before the first connection, and writes
`bench/results/pragma_sweep.json`.

Run:  .venv/bin/python bench/studies/pragma_sweep.py [--size 100000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

CONFIGS = [(2_000, 0), (65_536, 0), (2_000, 268_435_456), (65_536, 268_435_456)]
# Build, then time the exact (numpy) and vec0 engines, all in the patched process.
CHILD = """
import json, sys, tempfile
from pathlib import Path
import memlane.adapters.store.engine as engine
engine.CACHE_SIZE_KIB, engine.MMAP_SIZE = int(sys.argv[1]), int(sys.argv[2])
from memlane.bench.store_bench import _build, _search
where = Path(tempfile.mkdtemp(prefix="pragma-sweep-"))
built = _build(int(sys.argv[3]), 60, where, False)
exact = _search(where, "numpy", 20, False)
vec0 = _search(where, "vec0", 20, False)
print(json.dumps({
    "insert_chunks_per_s": built["insert_chunks_per_s"],
    "vector_top10_numpy": exact["vector_top10"],
    "vector_top10_vec0": vec0["vector_top10"],
    "first_fused_search_ms": exact["cold_first_fused_ms"],
    "keyword_top10": exact["keyword_top10"],
    "keyword_top10_source_filtered": exact["keyword_top10_source_filtered"],
    "hybrid_pair_top40": exact["hybrid_pair_top40"],
}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--out", default="bench/results/pragma_sweep.json")
    args = parser.parse_args()
    rows = []
    for cache_kib, mmap in CONFIGS:
        out = (
            subprocess.run(
                [sys.executable, "-c", CHILD, str(cache_kib), str(mmap), str(args.size)],
                check=True,
                capture_output=True,
                text=True,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        result = json.loads(out)
        row = {"cache_kib": cache_kib, "mmap_bytes": mmap, **result}
        rows.append(row)
        print(
            f"cache {cache_kib:>6} KiB  mmap {mmap >> 20:>4} MiB  "
            f"hybrid p50 {row['hybrid_pair_top40']['p50_ms']:6.1f} ms  "
            f"vec0 p50 {row['vector_top10_vec0']['p50_ms']:6.1f} ms  "
            f"keyword p50 {row['keyword_top10']['p50_ms']:6.1f} ms  "
            f"insert {row['insert_chunks_per_s']} chunks/s"
        )
    Path(args.out).write_text(json.dumps({"size": args.size, "runs": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
