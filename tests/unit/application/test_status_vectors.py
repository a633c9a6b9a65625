"""`status` says whose vectors the index holds when they are not the configured model's (a model
changed in the config, a runtime fallback's vectors seen by a new process), and a failed vector
backfill says what to fix when retrying cannot help. On fakes only."""

from __future__ import annotations

import pytest

from memlane.application.ports.embedding import (
    EmbeddingError,
    EmbeddingRejected,
    EmbeddingUnavailable,
    ProviderNotConfigured,
)
from memlane.application.ports.index_store import VectorProgress
from memlane.application.reports import Reembedding
from memlane.domain import events
from tests.fakes.embedding import FakeEmbeddingProvider
from tests.unit.application.conftest import World

NOTE = "# Note {n}\n\nThe ingest service number {n} deploys to cluster {n} on Tuesdays.\n"
REFUSED = "openai embeddings failed: the API key was refused (check OPENAI_API_KEY): 401"


def _notes(world: World, count: int = 3) -> None:
    for n in range(count):
        world.memory.write(f"memory/n{n}.md", NOTE.format(n=n))


@pytest.fixture
def openai(world: World) -> World:
    """An index built by an explicitly configured provider `openai` (model `small`)."""
    world.requested = "openai"
    world.embedder = FakeEmbeddingProvider(id="openai", model="small", dimensions=16)
    _notes(world)
    return world


class TestAChangedModel:
    def test_status_names_the_indexed_and_the_configured_model_until_re_embedded(
        self, openai: World
    ) -> None:
        openai.manager().sync()
        openai.embedder = FakeEmbeddingProvider(id="openai", model="large", dimensions=32)

        status = openai.manager().status()  # a new process, before any sync

        assert (status.provider, status.model) == ("openai", "large")
        assert status.vector_dims == 16 and status.vectors == VectorProgress(done=3, total=3)
        assert status.reembedding == Reembedding(
            indexed_provider="openai",
            indexed_model="small",
            provider="openai",
            model="large",
            vectors=VectorProgress(done=0, total=3),
        )
        assert status.fallback_from is None
        (warning,) = status.warnings
        assert warning == (
            "the index's vectors were made by openai small, not by the configured openai large "
            "(0 / 3 (0 %) of its vectors): re-embedding pending, the next sync "
            "(`memlane index`) embeds them"
        )

        openai.manager().sync()
        after = openai.manager().status()

        assert after.reembedding is None and after.warnings == ()
        assert after.vector_dims == 32 and after.vectors == VectorProgress(done=3, total=3)

    def test_a_deep_status_of_auto_compares_too(self, world: World) -> None:
        world.embedder = FakeEmbeddingProvider(model="small")
        _notes(world)
        world.manager().sync()
        world.embedder = FakeEmbeddingProvider(model="large")

        assert world.manager().status().reembedding is None  # auto: as the index recorded
        deep = world.manager().status(deep=True)

        assert deep.reembedding is not None
        assert (deep.reembedding.indexed_model, deep.reembedding.model) == ("small", "large")

    def test_other_settings_of_the_same_model_are_named_as_such(self, openai: World) -> None:
        openai.manager().sync()
        openai.embedder = FakeEmbeddingProvider(id="openai", model="small", dimensions=32)

        (warning,) = openai.manager().status().warnings

        assert warning.startswith(
            "the index's vectors were made by openai small (other settings: endpoint, "
            "dimensions or headers), not by the configured openai small "
        )

    def test_the_same_model_owes_nothing(self, openai: World) -> None:
        openai.manager().sync()

        status = openai.manager().status()

        assert status.reembedding is None and status.warnings == ()


class TestAFallbacksVectorsInANewProcess:
    @pytest.fixture
    def fell_back(self, openai: World) -> World:
        assert openai.embedder is not None
        openai.fallback = FakeEmbeddingProvider(id="ollama", model="nomic", dimensions=8)
        openai.embedder.fail_next(EmbeddingRejected(REFUSED))
        openai.manager().sync()  # the backfill fails, the fallback embeds every chunk
        return openai

    def test_status_says_the_vectors_are_the_fallbacks_and_why(self, fell_back: World) -> None:
        status = fell_back.manager().status()  # a new process: it runs openai again

        assert (status.provider, status.model, status.vector_dims) == ("openai", "small", 8)
        assert (status.fallback_from, status.fallback_reason) == ("openai", REFUSED)
        assert status.reembedding == Reembedding(
            indexed_provider="ollama",
            indexed_model="nomic",
            provider="openai",
            model="small",
            vectors=VectorProgress(done=0, total=3),
            by_fallback=True,
        )
        (warning,) = status.warnings
        assert warning.startswith("the index's vectors were made by ollama nomic (the fallback), ")
        assert warning.endswith("the next sync tries openai again and re-embeds if it answers")

    def test_the_process_that_fell_back_says_it_as_before(self, openai: World) -> None:
        assert openai.embedder is not None
        openai.fallback = FakeEmbeddingProvider(id="ollama", model="nomic", dimensions=8)
        openai.embedder.fail_next(EmbeddingRejected(REFUSED))
        app = openai.application()
        app.manager().sync()

        status = app.manager().status()  # the same process: its runtime runs the fallback

        assert (status.provider, status.model) == ("ollama", "nomic")
        assert (status.fallback_from, status.fallback_reason) == ("openai", REFUSED)
        assert status.reembedding is None

    def test_once_the_configured_provider_answers_again_nothing_is_said(
        self, fell_back: World
    ) -> None:
        fell_back.manager().sync()  # openai answers: every chunk re-embedded with it

        status = fell_back.manager().status()

        assert status.fallback_from is None and status.reembedding is None
        assert status.vector_dims == 16 and status.warnings == ()

    def test_a_switch_logged_later_is_not_taken_for_this_one(self, fell_back: World) -> None:
        fell_back.log.append(
            [
                events.ProviderFellBack(
                    occurred_at=fell_back.clock.now(),
                    from_provider="ollama",
                    to_provider="gemini",
                    reason="down",
                )
            ]
        )

        status = fell_back.manager().status()

        assert status.fallback_from is None
        assert status.reembedding is not None and not status.reembedding.by_fallback


def _vector_issue(world: World) -> str:
    (issue,) = [i for i in world.manager().status().issues if i.path == "(vectors)"]
    return issue.reason


class TestFailedBackfillWording:
    @pytest.mark.parametrize(
        ("error", "fix"),
        [
            (EmbeddingRejected(REFUSED), "fix the key, quota, model or endpoint it names"),
            (ProviderNotConfigured("openai: no API key (set OPENAI_API_KEY)"), "set the provider"),
        ],
        ids=["rejected", "not-configured"],
    )
    def test_a_final_failure_says_what_to_fix_not_that_it_retries(
        self, openai: World, error: EmbeddingError, fix: str
    ) -> None:
        assert openai.embedder is not None
        openai.embedder.fail_next(error)
        openai.manager().sync()

        reason = _vector_issue(openai)

        assert "will retry" not in reason
        assert reason.startswith(f"embedding failed: {error}; retrying cannot fix this; ")
        assert fix in reason and reason.endswith("then run `memlane index`")
        assert openai.manager().status().embed_failures == 1

    def test_a_transient_failure_still_says_it_will_be_retried(self, openai: World) -> None:
        assert openai.embedder is not None
        openai.embedder.fail_next(EmbeddingUnavailable("503 overloaded"))
        openai.manager().sync()

        assert _vector_issue(openai) == "embedding failed, will retry: 503 overloaded"

    def test_a_files_final_failure_says_what_to_fix_not_that_vectors_are_pending(
        self, openai: World
    ) -> None:
        openai.manager().sync()
        assert openai.embedder is not None
        openai.memory.write("memory/n0.md", NOTE.format(n=10))
        # The file's call, then the sync's backfill (no cool-down here): its vectors stay owed.
        openai.embedder.fail_next(EmbeddingRejected(REFUSED))
        openai.embedder.fail_next(EmbeddingRejected(REFUSED))
        openai.manager().sync()

        (issue,) = [i for i in openai.manager().status().issues if i.path == "memory/n0.md"]

        assert issue.reason == (
            f"embedding failed ({REFUSED}); indexed for keyword search, no vectors: retrying "
            "cannot fix this; fix the key, quota, model or endpoint it names, then run "
            "`memlane index`"
        )

    def test_a_files_transient_failure_keeps_its_vectors_pending(self, openai: World) -> None:
        openai.manager().sync()
        assert openai.embedder is not None
        openai.memory.write("memory/n0.md", NOTE.format(n=10))
        # The file's call, then the sync's backfill (no cool-down here): its vectors stay owed.
        openai.embedder.fail_next(EmbeddingUnavailable("503 overloaded"))
        openai.embedder.fail_next(EmbeddingUnavailable("503 overloaded"))
        openai.manager().sync()

        (issue,) = [i for i in openai.manager().status().issues if i.path == "memory/n0.md"]

        assert issue.reason == (
            "embedding failed (503 overloaded); indexed for keyword search, vectors pending"
        )
