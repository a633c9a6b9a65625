"""Helpers of the handler tests: notes, an index meta, the `Rig` of fakes behind each handler, events."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from memlane.application.embedding_runtime import EmbeddingRuntime, Selection
from memlane.application.handlers import IndexFile, RebuildIndex, RemoveFile
from memlane.application.indexing import FilePreparer
from memlane.application.issues import IssueBoard
from memlane.application.ports.embedding import EmbeddingProvider
from memlane.application.progress import ProgressTracker
from memlane.application.reports import SyncProgress
from memlane.domain import events
from memlane.domain.chunks import ChunkingPolicy
from memlane.domain.index_meta import IndexMeta, vector_label
from memlane.domain.sources import Source
from tests.fakes.clock import T0, FakeClock
from tests.fakes.embedding import FakeEmbeddingProvider
from tests.fakes.file_source import FakeFileSource
from tests.fakes.index_store import FakeIndexStore

NOTE = "# Deploys\n\nWe deploy the ingest service to the eu-west cluster every Tuesday.\n"
OTHER = "# Team\n\nPriya owns the billing service and reviews schema changes.\n"


def meta(model: str = "fake-bag-of-words") -> IndexMeta:
    return IndexMeta(
        schema_version=1,
        chunker_version=1,
        sources=("memory", "sessions"),
        scope_hash="scope-1",
        chunk_tokens=400,
        chunk_overlap=80,
        provider="fake",
        model=model,
        provider_key="k",
        dimensions=16,
    )


@dataclass
class Rig:
    """The handlers' collaborators, all fakes."""

    memory: FakeFileSource = field(default_factory=lambda: FakeFileSource(source_name="memory"))
    sessions: FakeFileSource = field(default_factory=lambda: FakeFileSource(source_name="sessions"))
    store: FakeIndexStore = field(default_factory=FakeIndexStore)
    embedder: FakeEmbeddingProvider | None = field(default_factory=FakeEmbeddingProvider)
    fallback: EmbeddingProvider | None = None
    clock: FakeClock = field(default_factory=FakeClock)
    issues: IssueBoard = field(default_factory=IssueBoard)
    progress: ProgressTracker = field(default_factory=ProgressTracker)
    reports: list[SyncProgress] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.progress.start(self.reports.append)
        embedder = self.embedder

        def select() -> Selection:
            return Selection(provider=embedder)

        def select_fallback() -> Selection:
            return Selection(provider=self.fallback)

        self.runtime = EmbeddingRuntime(select, select_fallback if self.fallback else None)
        self.preparer = FilePreparer(
            {"memory": self.memory, "sessions": self.sessions}, ChunkingPolicy()
        )

    def vector_label(self) -> str:
        """The label the active fake provider's vectors carry in the store."""
        assert self.embedder is not None
        return vector_label(self.embedder.model, self.embedder.key)

    def wanted_meta(self) -> IndexMeta:
        """The meta of the provider running now (the fallback's after a switch)."""
        provider = self.runtime.provider
        if provider is None:
            return meta()
        return replace(
            meta(provider.model),
            provider=provider.id,
            provider_key=provider.key,
            dimensions=getattr(provider, "dimensions", None),
        )

    def index_file(self) -> IndexFile:
        return IndexFile(
            preparer=self.preparer,
            store=self.store,
            runtime=self.runtime,
            issues=self.issues,
            clock=self.clock,
            progress=self.progress,
            wanted_meta=self.wanted_meta,
        )

    def remove_file(self) -> RemoveFile:
        return RemoveFile(store=self.store, issues=self.issues, clock=self.clock)

    def rebuild_index(self, sources: tuple[Source, ...] = ("memory", "sessions")) -> RebuildIndex:
        return RebuildIndex(
            preparer=self.preparer,
            sources=sources,
            store=self.store,
            runtime=self.runtime,
            issues=self.issues,
            clock=self.clock,
            progress=self.progress,
            wanted_meta=meta,
        )


def changed(path: str, source: Source = "memory") -> events.FileChanged:
    return events.FileChanged(occurred_at=T0, source=source, path=path, mtime=1.0, size=1)


def reindex() -> events.ReindexRequired:
    return events.ReindexRequired(occurred_at=T0, reason="user_requested")


def stored_paths(store: FakeIndexStore) -> list[tuple[str, str]]:
    return [(f.source, f.path) for f in store.files()]
