"""Keyword rows first, vectors after (issue #18): a rebuild commits every chunk without calling
the provider, the vector backfill embeds in committed batches, searches and status say how far
it is. On fakes only."""

from __future__ import annotations

from memlane.application.ports.embedding import EmbeddingUnavailable
from memlane.application.ports.index_store import VectorProgress
from memlane.application.sync import SyncService
from memlane.application.vector_backfill import BACKFILL_BATCH, SEARCH_BACKFILL_LIMIT
from memlane.domain import events
from memlane.domain.index_meta import vector_label
from tests.fakes.embedding import FakeEmbeddingProvider
from tests.unit.application.conftest import World

NOTE = "# Note {n}\n\nThe ingest service number {n} deploys to cluster {n} on Tuesdays.\n"


def _notes(world: World, count: int) -> None:
    for n in range(count):
        world.memory.write(f"memory/n{n:03}.md", NOTE.format(n=n))


def _label(world: World) -> str:
    assert world.embedder is not None
    return vector_label(world.embedder.model, world.embedder.key)


class TestKeywordRowsFirst:
    def test_a_sync_that_does_not_wait_leaves_every_vector_missing_and_search_answers(
        self, world: World
    ) -> None:
        _notes(world, 3)
        manager = world.manager()

        report = manager.sync(wait_for_vectors=False)

        assert report.full_reindex and report.vectors_backfilled == 0
        assert world.embedder is not None and world.embedder.embedded_texts == []
        assert manager.status().vectors == VectorProgress(done=0, total=3)
        response = manager.search("ingest service number 1")
        assert response.results[0].path == "memory/n001.md"
        assert any(w.startswith("vectors 0 / 3 (0 %)") for w in response.warnings)

    def test_the_default_sync_ends_with_every_vector(self, world: World) -> None:
        _notes(world, 3)
        manager = world.manager()

        report = manager.sync()

        assert report.vectors_backfilled == 3
        assert manager.status().vectors == VectorProgress(done=3, total=3)
        assert not any("vectors" in w for w in manager.search("ingest").warnings)

    def test_progress_reports_the_vector_phase_with_done_and_total(self, world: World) -> None:
        _notes(world, BACKFILL_BATCH + 5)
        seen: list[tuple[str, int, int]] = []

        world.manager().sync(
            progress=lambda p: seen.append((p.phase, p.vectors_done, p.vectors_total))
        )

        vector_reports = [(d, t) for phase, d, t in seen if phase == "vectors"]
        total = BACKFILL_BATCH + 5
        assert (0, total) in vector_reports
        assert (BACKFILL_BATCH, total) in vector_reports
        assert vector_reports[-1] == (total, total)


class TestBackfillBeforeASearch:
    def test_a_search_embeds_a_small_gap_before_answering(self, world: World) -> None:
        _notes(world, 3)
        manager = world.manager()
        manager.sync(wait_for_vectors=False)

        report = manager.refresh()

        assert report is not None and report.vectors_backfilled == 3

    def test_a_search_leaves_a_large_gap_to_the_backfill(self, world: World) -> None:
        _notes(world, SEARCH_BACKFILL_LIMIT + 1)
        manager = world.manager()
        manager.sync(wait_for_vectors=False)
        assert world.embedder is not None

        report = manager.refresh()

        assert report is not None and report.vectors_backfilled == 0
        assert world.embedder.embedded_texts == []


class TestBackfillStep:
    def test_each_step_commits_one_batch_and_resumes_where_the_last_stopped(
        self, world: World
    ) -> None:
        _notes(world, BACKFILL_BATCH + 5)
        app = world.application()
        app.manager().sync(wait_for_vectors=False)
        syncing: SyncService = app.syncing()
        assert world.embedder is not None

        assert syncing.backfill_step() == BACKFILL_BATCH
        assert world.store.vector_progress(_label(world)).done == BACKFILL_BATCH
        assert syncing.backfill_step() == 5
        assert syncing.backfill_step() == 0
        texts = world.embedder.embedded_texts
        assert len(texts) == len(set(texts)) == BACKFILL_BATCH + 5  # nothing embedded twice

    def test_a_failed_step_commits_nothing_and_is_reported(self, world: World) -> None:
        _notes(world, 3)
        app = world.application()
        app.manager().sync(wait_for_vectors=False)
        assert world.embedder is not None
        world.embedder.fail_next(EmbeddingUnavailable("503 overloaded"))

        assert app.syncing().backfill_step() == 0

        assert world.store.vector_progress(_label(world)) == VectorProgress(done=0, total=3)
        assert any("embedding failed" in i.reason for i in app.manager().status().issues)

    def test_a_fallback_during_the_backfill_is_a_logged_fact(self, world: World) -> None:
        world.fallback = FakeEmbeddingProvider(model="fallback-model", id="fallback")
        _notes(world, 3)
        app = world.application()
        app.manager().sync(wait_for_vectors=False)
        assert world.embedder is not None
        world.embedder.fail_next(EmbeddingUnavailable("500 server error"))

        app.syncing().backfill_step()

        fell = [r.event for r in world.log.tail(50) if isinstance(r.event, events.ProviderFellBack)]
        assert [e.to_provider for e in fell] == ["fallback"]
