"""A file's embedding failure leaves the issue board once a backfill has given every chunk of
the file a vector of the active model; the file's other problems, and other files', stay."""

from __future__ import annotations

import pytest

from memlane.application.issues import IssueBoard
from memlane.application.ports.embedding import EmbeddingUnavailable
from memlane.domain.index_meta import vector_label
from tests.fakes.embedding import FakeEmbeddingProvider
from tests.unit.application.conftest import World

NOTE = "# Note {n}\n\nThe ingest service number {n} deploys to cluster {n} on Tuesdays.\n"


@pytest.fixture
def failed(world: World) -> World:
    """An index whose `memory/n0.md` was re-indexed while the provider failed."""
    world.requested = "openai"
    world.embedder = FakeEmbeddingProvider(id="openai", model="small", dimensions=16)
    for n in range(3):
        world.memory.write(f"memory/n{n}.md", NOTE.format(n=n))
    world.manager().sync()
    world.memory.write("memory/n0.md", NOTE.format(n=10))
    # The file's call, then the sync's backfill (no cool-down here): its vectors stay owed.
    world.embedder.fail_next(EmbeddingUnavailable("503 overloaded"))
    world.embedder.fail_next(EmbeddingUnavailable("503 overloaded"))
    world.manager().sync()
    assert _reasons(world, "memory/n0.md") == [
        "embedding failed (503 overloaded); indexed for keyword search, vectors pending"
    ]
    return world


def _reasons(world: World, path: str) -> list[str]:
    return [i.reason for i in world.manager().status().issues if i.path == path]


class TestEmbeddingIssueCleared:
    def test_a_backfill_that_gives_the_file_its_vectors_clears_its_issue(
        self, failed: World
    ) -> None:

        failed.manager().sync()  # `memlane index`: the backfill embeds every missing vector

        assert failed.embedder is not None
        label = vector_label(failed.embedder.model, failed.embedder.key)
        assert failed.store.chunks_without_vectors(label) == []
        assert _reasons(failed, "memory/n0.md") == []  # in a new process too: persisted
        assert failed.manager().status().embed_failures == 0

    def test_the_background_step_clears_it_too(self, failed: World) -> None:
        app = failed.application()

        while app.syncing().backfill_step():
            pass

        assert _reasons(failed, "memory/n0.md") == []

    def test_a_backfill_that_fails_again_keeps_it(self, failed: World) -> None:
        assert failed.embedder is not None
        failed.embedder.fail_next(EmbeddingUnavailable("503 overloaded"))

        failed.manager().sync()

        assert _reasons(failed, "memory/n0.md") != []


class TestIssueBoard:
    def test_only_the_embedding_failure_leaves_a_files_other_problems(self) -> None:
        board = IssueBoard()
        board.report(
            "memory",
            "MEMORY.md",
            "2 secret(s) redacted; embedding failed (503 overloaded; retry); indexed for "
            "keyword search, vectors pending",
        )
        board.report("memory", "big.md", "file too large")
        board.report("memory", "b.md", "embedding failed (503); indexed for keyword search")

        assert board.clear_embedding_failures() is True

        assert [(i.path, i.reason) for i in board.all()] == [
            ("MEMORY.md", "2 secret(s) redacted"),
            ("big.md", "file too large"),
        ]
        assert board.clear_embedding_failures() is False  # nothing left to clear
