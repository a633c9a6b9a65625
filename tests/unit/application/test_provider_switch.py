"""Switching embedding provider re-embeds, even when the new provider's model has the same name."""

from __future__ import annotations

from tests.fakes.embedding import FakeEmbeddingProvider
from tests.unit.application.conftest import World

NOTE = "# Deploys\n\nWe deploy the ingest service to the eu-west cluster every Tuesday.\n"


class TestProviderSwitch:
    def test_another_model_re_embeds_without_a_rebuild(self, world: World) -> None:
        world.memory.write("MEMORY.md", NOTE)
        world.manager().sync()

        world.embedder = FakeEmbeddingProvider(model="other-model")
        report = world.manager().sync()

        assert not report.full_reindex
        assert report.vectors_backfilled >= 1

    def test_another_provider_with_the_same_model_name_re_embeds(self, world: World) -> None:
        """local's multilingual-e5-small and ollama's are different vector spaces."""
        world.memory.write("MEMORY.md", NOTE)
        world.embedder = FakeEmbeddingProvider(id="local", model="multilingual-e5-small")
        world.manager().sync()

        world.embedder = FakeEmbeddingProvider(id="ollama", model="multilingual-e5-small")
        report = world.manager().sync()

        assert world.embedder.embedded_texts, "the new provider embedded nothing"
        assert report.vectors_backfilled >= 1
