"""Benchmark: vector-index designs side by side, on the same vectors, in one run (issue #18).

Options, each built once and then queried from a FRESH process (so "cold" is what a CLI search
pays: open + first query; RSS is that process's peak, mmap pages it touched included):

* `exact`     - today's design: every float32 vector loaded into the process, einsum top-k;
* `int8`      - int8 codes (per-dimension scale) in a memory-mapped file, scanned block by
                block, top candidates re-scored with float32;
* `bits`      - 1-bit codes (sign of the vector minus the corpus mean, 48 bytes at 384 dims)
                memory-mapped, Hamming scan, then int8 re-scoring of the best `C1`, then float32
                re-scoring of the best pool = max(2k, 200);
* `hnsw-i8`   - usearch HNSW with i8 storage, saved and opened as a memory-mapped view, the best
                pool = max(2k, 200) re-scored with float32.

`hnsw-i8` needs `pip install usearch` (bench only, not a memlane dependency: the option was
measured and not taken). Float32 re-scoring here reads a memory-mapped float32 copy (the store
reads the same bytes from SQLite). Recall@k is against the exact float32 top-k of the query.

    .venv/bin/python bench/studies/vector_options.py --data clustered --size 100000
    .venv/bin/python bench/studies/vector_options.py --data real --real-npy /tmp/vindex/real.npy

Writes bench/results/vector_options-<data>-<size>.json.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

DIMS = 384
OPTIONS = ("exact", "int8", "bits", "hnsw-i8")
# As the store (vector_code_index.pool_sizes): float32 re-scoring of max(2k, 200) rows; the bit
# scan keeps max(20 x that, 4000).
RESCORE_FLOOR = 200
BITS_CANDIDATES = 4000
# --depth-of N: keep the share of the rows each stage keeps in a store of N rows (0: off);
# DEPTH_STAGES "bits" scales only the bit stage (everything it keeps, up to the re-score pool, is
# re-scored exactly), "all" scales the float32 re-score pool too.
DEPTH_OF = 0
DEPTH_STAGES = "all"


def stage_sizes(k: int, n: int) -> tuple[int, int]:
    """(rows re-scored with float32, rows kept by the bit scan) for a top-k over n rows."""
    pool = max(k * 2, RESCORE_FLOOR)
    keep = max(BITS_CANDIDATES, pool * 20)
    if DEPTH_OF:
        # The share of the rows the store keeps at DEPTH_OF rows, never fewer than k.
        keep = max(k, math.ceil(keep * n / DEPTH_OF))
        pool = min(pool, keep) if DEPTH_STAGES == "bits" else max(k, math.ceil(pool * n / DEPTH_OF))
    return pool, keep


def _clustered(n: int, rng: np.random.Generator) -> np.ndarray:
    """Anisotropic clustered unit vectors: a shared direction (sentence embeddings have one:
    e5's random pairs score ~0.7), one of n/100 cluster directions, and noise."""
    common = rng.standard_normal(DIMS)
    common /= np.linalg.norm(common)
    centers = rng.standard_normal((max(n // 100, 10), DIMS)).astype(np.float32)
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    out = np.empty((n, DIMS), dtype=np.float32)
    for start in range(0, n, 100_000):
        m = min(100_000, n - start)
        which = rng.integers(0, len(centers), m)
        noise = rng.standard_normal((m, DIMS)).astype(np.float32) / np.sqrt(DIMS)
        block = 0.8 * common + 0.45 * centers[which] + 0.4 * noise
        out[start : start + m] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def _normalise(v: np.ndarray) -> np.ndarray:
    out: np.ndarray = (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)
    return out


def _exact_top(vectors: np.ndarray, q: np.ndarray, k: int) -> np.ndarray:
    scores = np.einsum("ij,j->i", vectors, q)
    top = np.argpartition(-scores, k - 1)[:k]
    return top[np.argsort(-scores[top], kind="stable")]


def _rescore(f32: np.ndarray, q: np.ndarray, ids: np.ndarray, k: int) -> np.ndarray:
    ids = np.sort(ids)  # sequential-ish reads of the float32 rows
    scores = np.einsum("ij,j->i", f32[ids], q)
    order = np.argsort(-scores, kind="stable")[:k]
    return ids[order]


def prepare(work: Path, data: str, size: int, real: Path | None, queries: int) -> None:
    rng = np.random.default_rng(7)
    if data == "real":
        assert real is not None
        corpus = _normalise(np.load(real))
        # Real queries are not in the corpus: hold out a slice of the vectors as queries.
        pick = rng.permutation(len(corpus))
        qs, corpus = corpus[pick[:queries]], corpus[pick[queries:]]
    else:
        both = _clustered(size + queries, rng)
        corpus, qs = both[:size], both[size:]
    np.save(work / "f32.npy", corpus)
    np.save(work / "queries.npy", qs)
    truth = np.stack([_exact_top(corpus, q, 10) for q in qs])
    np.save(work / "truth.npy", truth)
    k200 = min(200, len(corpus) - 1)
    np.save(work / "truth200.npy", np.stack([_exact_top(corpus, q, k200) for q in qs]))


def build(work: Path, option: str) -> dict[str, Any]:
    t = time.perf_counter()
    f32 = np.load(work / "f32.npy", mmap_mode="r")
    n = len(f32)
    if option == "int8" or option == "bits":
        scale = np.abs(f32).max(axis=0) / 127.0
        scale[scale == 0] = 1.0
        np.save(work / "scale.npy", scale.astype(np.float32))
        codes = np.lib.format.open_memmap(work / "i8.npy", "w+", np.int8, (n, DIMS))
        for s in range(0, n, 65536):
            codes[s : s + 65536] = np.rint(f32[s : s + 65536] / scale).astype(np.int8)
        codes.flush()
    if option == "bits":
        mean = np.asarray(f32.mean(axis=0), dtype=np.float32)
        np.save(work / "mean.npy", mean)
        # Word-major (DIMS/64 rows of n uint64): the scan reads each word column contiguously.
        words = np.lib.format.open_memmap(work / "bits.npy", "w+", np.uint64, (DIMS // 64, n))
        for s in range(0, n, 65536):
            packed = np.packbits(f32[s : s + 65536] > mean, axis=1).view(np.uint64)
            words[:, s : s + len(packed)] = packed.T
        words.flush()
    if option == "hnsw-i8":
        from usearch.index import Index

        index = Index(ndim=DIMS, metric="cos", dtype="i8", connectivity=16, expansion_add=128)
        index.add(np.arange(n, dtype=np.uint64), np.ascontiguousarray(f32), threads=2)
        index.save(str(work / "hnsw.usearch"))
    files = {"int8": ["i8.npy"], "bits": ["i8.npy", "bits.npy"], "hnsw-i8": ["hnsw.usearch"]}
    disk = sum((work / f).stat().st_size for f in files.get(option, ["f32.npy"]))
    return {"build_s": round(time.perf_counter() - t, 2), "index_mb": round(disk / 1e6, 1)}


class Searcher:
    def __init__(self, work: Path, option: str, ef: int) -> None:
        self.option = option
        self.f32 = np.load(work / "f32.npy", mmap_mode="r")
        if option == "exact":
            self.f32 = np.load(work / "f32.npy")  # today: the whole matrix in the process
        if option in ("int8", "bits"):
            self.codes = np.load(work / "i8.npy", mmap_mode="r")
            self.scale = np.load(work / "scale.npy")
        if option == "bits":
            self.bits = np.load(work / "bits.npy", mmap_mode="r")
            self.mean = np.load(work / "mean.npy")
        if option == "hnsw-i8":
            from usearch.index import Index

            index: Any = Index.restore(str(work / "hnsw.usearch"), view=True)
            index.expansion_search = ef
            self.index = index

    def top(self, q: np.ndarray, k: int) -> np.ndarray:
        pool, c1 = stage_sizes(k, len(self.f32))
        if self.option == "exact":
            return _exact_top(self.f32, q, k)
        if self.option == "int8":
            qs = (q * self.scale).astype(np.float32)
            n = len(self.codes)
            scores = np.empty(n, dtype=np.float32)
            for s in range(0, n, 32768):
                block = self.codes[s : s + 32768].astype(np.float32)
                scores[s : s + len(block)] = np.einsum("ij,j->i", block, qs)
            cand = np.argpartition(-scores, pool - 1)[:pool] if pool < n else np.arange(n)
            return _rescore(self.f32, q, cand, k)
        if self.option == "bits":
            qb = np.packbits(q > self.mean).view(np.uint64)
            dist = np.bitwise_count(self.bits[0] ^ qb[0]).astype(np.uint16)
            for w in range(1, len(qb)):
                dist += np.bitwise_count(self.bits[w] ^ qb[w])
            c1 = min(c1, len(dist))
            cand = np.argpartition(dist, c1 - 1)[:c1] if c1 < len(dist) else np.arange(len(dist))
            cand.sort()
            approx = np.einsum("ij,j->i", self.codes[cand].astype(np.float32), q * self.scale)
            keep = cand[np.argpartition(-approx, pool - 1)[:pool]] if pool < c1 else cand
            return _rescore(self.f32, q, keep, k)
        matches = self.index.search(q, pool)
        return _rescore(self.f32, q, np.asarray(matches.keys, dtype=np.int64), k)


def _peak_rss_mb() -> float:
    """This process's RSS high-water mark. Not ru_maxrss: on Linux that survives exec, so a child
    of a big parent reports the parent's size."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def query(work: Path, option: str, ef: int) -> dict[str, Any]:
    qs = np.load(work / "queries.npy")
    truth = np.load(work / "truth.npy")
    t = time.perf_counter()
    searcher = Searcher(work, option, ef)
    first = searcher.top(qs[0], 10)
    cold = time.perf_counter() - t
    truth200 = np.load(work / "truth200.npy")
    times10, times200, hits, hits200 = [], [], 0, 0
    for i, q in enumerate(qs):
        t = time.perf_counter()
        got = searcher.top(q, 10)
        times10.append(time.perf_counter() - t)
        hits += len(set(got.tolist()) & set(truth[i].tolist()))
        t = time.perf_counter()
        got200 = searcher.top(q, 200)
        hits200 += len(set(got200.tolist()) & set(truth200[i].tolist()))
        times200.append(time.perf_counter() - t)
    del first

    def pct(xs: list[float]) -> dict[str, float]:
        xs = sorted(xs)
        return {
            "p50_ms": round(statistics.median(xs) * 1000, 2),
            "p95_ms": round(xs[int(0.95 * (len(xs) - 1))] * 1000, 2),
        }

    return {
        "cold_first_query_ms": round(cold * 1000, 1),
        "top10": pct(times10),
        "top200": pct(times200),
        "recall_at_10": round(hits / (10 * len(qs)), 4),
        "recall_at_200": round(hits200 / (200 * len(qs)), 4),
        "peak_rss_mb": _peak_rss_mb(),
    }


def main() -> None:
    global RESCORE_FLOOR, BITS_CANDIDATES, DEPTH_OF, DEPTH_STAGES
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--data", choices=["clustered", "real"], default="clustered")
    p.add_argument("--size", type=int, default=100_000)
    p.add_argument("--real-npy", type=Path)
    p.add_argument("--queries", type=int, default=100)
    p.add_argument("--options", nargs="+", default=list(OPTIONS))
    p.add_argument("--ef", type=int, default=256)
    p.add_argument("--pool", type=int, default=RESCORE_FLOOR, help="float32 re-scoring floor")
    p.add_argument("--bits-candidates", type=int, default=BITS_CANDIDATES)
    p.add_argument(
        "--depth-of",
        type=int,
        default=0,
        help="keep the share of the rows the stages keep in a store of this many rows",
    )
    p.add_argument("--depth-stages", choices=["all", "bits"], default="all")
    p.add_argument("--work", type=Path, default=Path("/tmp/vector-options"))
    p.add_argument("--tag", default="", help="suffix of the result file name")
    p.add_argument("--step", help=argparse.SUPPRESS)
    p.add_argument("--option", help=argparse.SUPPRESS)
    a = p.parse_args()
    RESCORE_FLOOR, BITS_CANDIDATES = a.pool, a.bits_candidates
    DEPTH_OF, DEPTH_STAGES = a.depth_of, a.depth_stages
    work = a.work / f"{a.data}-{a.size}"
    if a.step:
        done = build(work, a.option) if a.step == "build" else query(work, a.option, a.ef)
        print(json.dumps(done))
        return
    work.mkdir(parents=True, exist_ok=True)
    prepare(work, a.data, a.size, a.real_npy, a.queries)
    n = len(np.load(work / "f32.npy", mmap_mode="r"))
    results: dict[str, Any] = {
        "data": a.data,
        "vectors": n,
        "queries": a.queries,
        "ef": a.ef,
        "pool": a.pool,
        "bits_candidates": a.bits_candidates,
        "depth_of": a.depth_of,
        "depth_stages": a.depth_stages,
        # What the stages kept per query here (float32 re-score pool, bit stage), top-10 / 200.
        "stage_sizes": {"top10": stage_sizes(10, n), "top200": stage_sizes(200, n)},
    }
    for option in a.options:
        row: dict[str, Any] = {}
        for step in ("build", "query"):
            cmd = [sys.executable, __file__, "--data", a.data, "--size", str(a.size),
                   "--work", str(a.work), "--ef", str(a.ef), "--pool", str(a.pool),
                   "--bits-candidates", str(a.bits_candidates),
                   "--depth-of", str(a.depth_of), "--depth-stages", a.depth_stages,
                   "--step", step, "--option", option]  # fmt: skip
            out = subprocess.run(cmd, capture_output=True, text=True, check=True)
            row.update(json.loads(out.stdout.strip().splitlines()[-1]))
        results[option] = row
        print(option, json.dumps(row), flush=True)
    name = f"vector_options-{a.data}-{n}{a.tag}.json"
    target = Path(__file__).parent.parent / "results" / name
    if target.exists():  # a run of some options updates them, keeping the others' rows
        results = {**json.loads(target.read_text()), **results}
    target.write_text(json.dumps(results, indent=2) + "\n")
    print(f"written {target}")


if __name__ == "__main__":
    main()
