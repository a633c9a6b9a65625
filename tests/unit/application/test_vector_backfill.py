"""Keyword rows first, vectors after (issue #18): a rebuild commits every chunk without calling
the provider, the vector backfill embeds in committed batches, searches and status say how far
it is. On fakes only."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from memlane.application.embedding_runtime import EmbeddingRuntime, Selection
from memlane.application.ports.embedding import EmbeddingUnavailable
from memlane.application.ports.index_store import IndexedFile, VectorProgress
from memlane.application.queries import Searcher, waiting_for_vectors
from memlane.application.reports import IndexingProgress, SyncReport
from memlane.application.sync import SyncService
from memlane.application.sync_trigger import SyncTrigger
from memlane.application.vector_backfill import BACKFILL_BATCH, SEARCH_BACKFILL_LIMIT
from memlane.domain import events
from memlane.domain.chunking import chunk_text
from memlane.domain.chunks import ChunkingPolicy
from memlane.domain.hashing import bytes_hash
from memlane.domain.index_meta import KEYWORD_ONLY_MODEL, IndexMeta, vector_label
from memlane.domain.search import SearchQuery
from memlane.entrypoints.container.application import Application
from tests.fakes.embedding import FakeEmbeddingProvider
from tests.unit.application.conftest import World
from tests.unit.application.test_scheduler import wait_until

_META = IndexMeta(
    schema_version=1,
    chunker_version=1,
    sources=("memory",),
    scope_hash="scope-1",
    chunk_tokens=400,
    chunk_overlap=80,
    provider="fake",
    model="m",
    provider_key="k",
    dimensions=16,
)

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
        assert report.vectors == VectorProgress(done=0, total=3)
        assert world.embedder is not None and world.embedder.embedded_texts == []
        assert manager.status().vectors == VectorProgress(done=0, total=3)

    def test_a_hybrid_search_answers_by_keywords_until_the_vectors_are_embedded(
        self, world: World
    ) -> None:
        # Fused over part of the vectors, chunks without one sink: measured worse than keywords.
        _notes(world, SEARCH_BACKFILL_LIMIT + 1)  # too many for a search to embed first
        manager = world.manager()
        manager.sync(wait_for_vectors=False)
        assert world.embedder is not None
        world.embedder.calls.clear()

        response = manager.search("ingest service number 1")

        assert response.mode == "keyword"
        assert [c.kind for c in world.embedder.calls] == []  # no query embedded for nothing
        assert any(
            "answering by keywords until the vectors are embedded" in w for w in response.warnings
        )

        manager.sync()  # every vector
        after = manager.search("ingest service number 1")
        assert after.mode == "hybrid"
        assert not any("vectors" in w for w in after.warnings)


class TestWaitingForVectors:
    def test_a_fused_ranking_waits_for_all_but_two_percent_of_the_vectors(self) -> None:
        assert waiting_for_vectors(VectorProgress(done=0, total=3))
        assert waiting_for_vectors(VectorProgress(done=979, total=1000))
        assert not waiting_for_vectors(VectorProgress(done=980, total=1000))
        assert waiting_for_vectors(VectorProgress(done=48, total=50))
        assert not waiting_for_vectors(VectorProgress(done=49, total=50))  # 2 % of 50: 1 chunk
        assert not waiting_for_vectors(VectorProgress(done=98, total=100))
        assert not waiting_for_vectors(VectorProgress(done=3, total=3))
        assert not waiting_for_vectors(VectorProgress(done=0, total=0))

    def test_the_default_sync_ends_with_every_vector(self, world: World) -> None:
        _notes(world, 3)
        manager = world.manager()

        report = manager.sync()

        assert report.vectors_backfilled == 3
        assert report.vectors == VectorProgress(done=3, total=3)
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

    def test_a_keyword_only_sync_reports_no_vectors(self, world: World) -> None:
        world.embedder = None
        _notes(world, 3)
        manager = world.manager()

        report = manager.sync(wait_for_vectors=False)

        assert report.files_indexed == 3
        assert report.vectors is None
        assert manager.status().vectors is None

    def test_a_provider_cooling_down_still_reports_the_vectors_it_owes(self, world: World) -> None:
        """Nothing silent: a failed provider leaves vectors missing, and the report says so."""
        _notes(world, 3)
        manager = world.manager()
        assert world.embedder is not None
        world.embedder.fail_next(EmbeddingUnavailable("503 overloaded"))

        report = manager.sync()

        assert report.vectors == VectorProgress(done=0, total=3)
        assert report.vectors == manager.status().vectors
        assert report.warnings  # and the provider's failure is a warning


class TestBackfillBeforeASearch:
    def test_a_search_embeds_a_small_gap_before_answering(self, world: World) -> None:
        _notes(world, 3)
        manager = world.manager()
        manager.sync(wait_for_vectors=False)

        report = manager.refresh()

        assert report is not None and report.vectors_backfilled == 3

    def test_a_servers_search_embeds_a_small_gap_too(self, world: World) -> None:
        """#30.3: a server (MCP, gRPC) searches without `refresh`; a few missing vectors are
        embedded before the answer all the same, so it is not keyword-only."""
        _notes(world, 3)
        manager = world.manager()
        manager.sync(wait_for_vectors=False)

        response = manager.search("ingest service number 1")

        assert response.mode == "hybrid" and response.results[0].path == "memory/n001.md"
        assert not any(w.startswith("vectors ") for w in response.warnings)
        assert manager.status().vectors == VectorProgress(done=3, total=3)

    def test_a_servers_search_leaves_a_large_gap_to_the_backfill(self, world: World) -> None:
        _notes(world, SEARCH_BACKFILL_LIMIT + 1)
        manager = world.manager()
        manager.sync(wait_for_vectors=False)
        assert world.embedder is not None

        response = manager.search("ingest service number 1")

        assert response.mode == "keyword" and world.embedder.embedded_texts == []
        total = SEARCH_BACKFILL_LIMIT + 1
        assert any(w.startswith(f"vectors 0 / {total}") for w in response.warnings)

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
        vectors_only = list(world.embedder.embedded_texts)
        # Then the notes' pieces, a call's worth per step, until none is missing.
        steps = 0
        while syncing.backfill_step():
            steps += 1
        assert steps >= 1
        assert world.store.chunks_without_pieces(_label(world)) == []
        assert syncing.backfill_step() == 0
        assert len(vectors_only) == len(set(vectors_only)) == BACKFILL_BATCH + 5
        texts = world.embedder.embedded_texts
        assert len(texts) == len(set(texts))  # nothing embedded twice, pieces included

    def test_a_stop_asked_mid_step_ends_it_after_the_running_call_with_that_call_committed(
        self, world: World
    ) -> None:
        _notes(world, BACKFILL_BATCH + 5)
        app = world.application()
        app.manager().sync(wait_for_vectors=False)
        syncing: SyncService = app.syncing()
        assert world.embedder is not None
        calls = world.embedder.calls

        def stopping() -> bool:  # asked for once the first provider call has been made
            return any(c.kind == "documents" for c in calls)

        done = syncing.backfill_step(stopping)
        first = [c for c in calls if c.kind == "documents"]
        assert len(first) == 1 and 0 < done == len(first[0].texts) < BACKFILL_BATCH
        assert world.store.vector_progress(_label(world)).done == done  # committed
        assert syncing.backfill_step() == BACKFILL_BATCH + 5 - done  # the rest, from there
        texts = world.embedder.embedded_texts
        assert len(texts) == len(set(texts))  # nothing embedded twice

    def test_calls_are_sized_to_the_providers_pace(self, world: World) -> None:
        """A slow provider (a local model) gets small calls, so a stop waits for little."""
        _notes(world, BACKFILL_BATCH)
        app = world.application()
        app.manager().sync(wait_for_vectors=False)
        assert world.embedder is not None
        embed = world.embedder.embed_documents

        def slow(texts: list[str]) -> list[list[float]]:
            world.clock.advance(1.0 * len(texts))  # a second per passage
            return embed(texts)

        world.embedder.embed_documents = slow  # type: ignore[method-assign,assignment]
        calls = world.embedder.calls
        assert app.syncing().backfill_step() == BACKFILL_BATCH
        sizes = [len(c.texts) for c in calls if c.kind == "documents"]
        assert sizes[0] == 8 and max(sizes[1:]) <= 2  # about two seconds per call after the first

    def test_closing_during_a_full_backfill_ends_it_after_the_running_batch(
        self, world: World
    ) -> None:
        """`index` through the daemon (or a gRPC Sync) runs the whole backfill under the sync
        lock; the process stopping closes the store, which must not wait for every batch."""
        _notes(world, 2 * BACKFILL_BATCH + 5)
        app = world.application()
        manager = app.manager()
        manager.sync(wait_for_vectors=False)  # keyword rows only
        syncing: SyncService = app.syncing()
        assert world.embedder is not None
        embed = world.embedder.embed_documents
        entered, release = threading.Event(), threading.Event()

        def gated(texts: list[str]) -> list[list[float]]:
            entered.set()
            assert release.wait(60)
            return embed(texts)

        world.embedder.embed_documents = gated  # type: ignore[method-assign,assignment]
        reports: list[SyncReport] = []
        sync = threading.Thread(target=lambda: reports.append(manager.sync()))
        sync.start()
        assert entered.wait(10)  # the first batch is with the provider
        closing = threading.Thread(target=syncing.close_store)
        closing.start()
        # Close has asked (and now waits for the sync lock): then the batch may finish.
        wait_until(lambda: getattr(syncing, "_closing", threading.Event()).is_set(), timeout=10)
        release.set()
        sync.join(10)
        closing.join(10)
        assert not sync.is_alive() and not closing.is_alive()
        assert reports and reports[0].vectors_backfilled == BACKFILL_BATCH  # that batch only
        assert world.store.vector_progress(_label(world)).done == BACKFILL_BATCH  # committed

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


def _written_alone(world: World, path: str) -> None:
    """One note's rows as another process's first index committed them (keyword rows only)."""
    text = world.memory.read_bytes(path).decode()
    chunks = chunk_text("memory", path, text, ChunkingPolicy())
    file = IndexedFile(
        source="memory", path=path, hash=bytes_hash(text.encode()), mtime=1.0, size=1
    )
    world.store.replace_file(file, chunks, [None] * len(chunks), KEYWORD_ONLY_MODEL)


class TestFirstIndexInAnotherProcess:
    """Another process writes the first index straight into the store: this one neither
    indexes the files a second time nor waits; its searches answer from what is there."""

    def test_a_sync_is_skipped_and_says_why(self, world: World) -> None:
        _notes(world, 3)
        world.store.first_index_elsewhere(_META, 3, running=True)
        manager = world.manager()

        report = manager.sync()

        assert report.warnings == (
            "another process is building the first index (indexing 0 / 3 files (0 %)): this "
            "sync is skipped, searches answer from the files indexed so far",
        )
        assert (report.files_indexed, report.events_handled) == (0, 0)
        assert world.store.files() == [] and world.store.meta() is None
        assert world.embedder is not None and world.embedder.embedded_texts == []
        assert world.application().syncing().backfill_step() == 0

    def test_a_search_answers_from_the_files_written_so_far_and_says_how_far(
        self, world: World
    ) -> None:
        _notes(world, 3)
        _written_alone(world, "memory/n001.md")
        world.store.first_index_elsewhere(_META, 3, running=True)

        response = world.manager().search("ingest service number 1")

        assert [r.path for r in response.results][:1] == ["memory/n001.md"]
        assert "indexing 1 / 3 files (33 %): results cover the files indexed so far" in (
            response.warnings
        )
        assert world.store.meta() is None  # still the other process's to finish
        assert world.manager().status().indexing == IndexingProgress(
            files_done=1, files_total=3, running=True
        )

    def test_an_interrupted_one_is_named_so(self, world: World) -> None:
        _notes(world, 3)
        _written_alone(world, "memory/n001.md")
        world.store.first_index_elsewhere(_META, 3, running=False)
        searcher = Searcher(
            store=world.store,
            runtime=EmbeddingRuntime(lambda: Selection(provider=None)),
            settings=world.settings,
        )

        response = searcher.search(SearchQuery("ingest service number 1"), now=0.0)

        assert response.warnings == (
            "the first index was interrupted (indexing 1 / 3 files (33 %)): results cover the "
            "files indexed so far; the next sync (`memlane index`) completes it",
        )

    def test_the_next_sync_completes_an_interrupted_one(self, world: World) -> None:
        _notes(world, 3)
        _written_alone(world, "memory/n001.md")
        world.store.first_index_elsewhere(_META, 3, running=False)

        report = world.manager().sync()

        assert report.full_reindex and report.files_indexed == 3
        assert [f.path for f in world.store.files()] == [f"memory/n{n:03}.md" for n in range(3)]
        assert world.store.first_index() is None and world.store.meta() is not None


def _notes_without_pieces(world: World, indexed: int, new: int, limit: int) -> Application:
    """`indexed` notes synced with their pieces, then `new` more written and synced by a
    search's sync that gives pieces to at most `limit`: with more than `limit` new, every chunk
    has its vector and the new notes lack their pieces."""
    _notes(world, indexed)
    app = world.application()
    app.manager().sync()
    for n in range(indexed, indexed + new):
        world.memory.write(f"memory/n{n:03}.md", NOTE.format(n=n))
    app.syncing().run(SyncTrigger.SEARCH, backfill_limit=limit)
    assert world.store.vector_progress(_label(world)).complete
    return app


class TestPiecesFollowTheVectors:
    def test_a_limited_run_gives_pieces_only_once_every_chunk_has_its_vector(
        self, world: World
    ) -> None:
        # The sync embeds the new notes' own vectors as it indexes them; their pieces wait for
        # a backfill, which a search's sync gives only when few are missing.
        app = _notes_without_pieces(world, indexed=3, new=3, limit=2)
        assert world.store.pieces_owed(_label(world), 100) == 3  # 3 > 2: deferred

        app.syncing().run(SyncTrigger.SEARCH, backfill_limit=10)

        assert world.store.pieces_owed(_label(world), 100) == 0
        assert world.embedder is not None
        assert "The ingest service number 5 deploys to cluster 5 on Tuesdays." in (
            world.embedder.embedded_texts
        )

    def test_a_servers_search_gives_a_few_missing_pieces_when_every_vector_is_in(
        self, world: World
    ) -> None:
        """A sync that left a few note chunks without pieces (more than its limit) is followed
        by a search that fills them, as it fills a few missing vectors."""
        app = _notes_without_pieces(world, indexed=3, new=3, limit=2)
        assert world.store.pieces_owed(_label(world), 100) == 3

        response = app.manager().search("ingest service number 4")

        assert world.store.pieces_owed(_label(world), 100) == 0
        assert not any("no piece" in w for w in response.warnings)

    def test_a_servers_search_leaves_many_missing_pieces_to_the_backfill(
        self, world: World
    ) -> None:
        app = _notes_without_pieces(world, indexed=1, new=SEARCH_BACKFILL_LIMIT + 1, limit=2)
        assert world.embedder is not None
        embedded = len(world.embedder.embedded_texts)

        response = app.manager().search("ingest service number 4")

        assert len(world.embedder.embedded_texts) == embedded
        assert world.store.pieces_owed(_label(world), 100) == SEARCH_BACKFILL_LIMIT + 1
        assert any("no piece" in w for w in response.warnings)

    def test_a_backlog_stays_deferred_search_after_search(self, world: World) -> None:
        """The limit is checked against the whole backlog: once, a count that followed the
        store's walk saw only its tail and a search embedded every note's pieces."""
        app = _notes_without_pieces(world, indexed=1, new=9, limit=4)
        assert world.embedder is not None
        embedded = len(world.embedder.embedded_texts)

        for _ in range(3):
            app.syncing().run(SyncTrigger.SEARCH, backfill_limit=4)

        assert len(world.embedder.embedded_texts) == embedded
        assert world.store.pieces_owed(_label(world), 100) == 9


@dataclass
class BatchJobProvider(FakeEmbeddingProvider):
    """A provider whose documents go through a batch API: each call is one job."""

    batch_active: bool = True


class TestBatchJobs:
    NOTES = 70  # more than a backfill batch (32) and a provider call's group (64)

    def test_a_full_run_hands_a_batch_api_every_missing_chunk_in_one_job(
        self, world: World
    ) -> None:
        world.embedder = BatchJobProvider()
        _notes(world, self.NOTES)

        world.manager().sync()

        jobs = [len(call.texts) for call in world.embedder.calls if call.kind == "documents"]
        # One job for the chunks' vectors, one for their pieces (each note's two lines), not
        # a job of minutes to hours per 32 or 64 chunks.
        assert jobs == [self.NOTES, 2 * self.NOTES]

    def test_with_the_batch_api_off_the_run_goes_batch_by_batch(self, world: World) -> None:
        world.embedder = BatchJobProvider(batch_active=False)  # off after repeated failures
        _notes(world, self.NOTES)

        world.manager().sync()

        calls = [len(call.texts) for call in world.embedder.calls if call.kind == "documents"]
        assert calls[:3] == [BACKFILL_BATCH, BACKFILL_BATCH, self.NOTES - 2 * BACKFILL_BATCH]
