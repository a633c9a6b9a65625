"""The three handlers (IndexFile, RemoveFile, RebuildIndex), each called directly on fakes."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from memlane.application.embedding_runtime import EmbeddingRuntime, Selection
from memlane.application.handlers import IndexFile, RebuildIndex, RemoveFile, build_routes
from memlane.application.indexing import FilePreparer
from memlane.application.issues import IssueBoard
from memlane.application.ports.embedding import EmbeddingProvider, EmbeddingUnavailable
from memlane.application.ports.index_store import IndexedFile, IndexRebuild
from memlane.application.progress import ProgressTracker
from memlane.application.reports import SyncProgress
from memlane.domain import events
from memlane.domain.chunks import ChunkingPolicy
from memlane.domain.index_meta import IndexMeta, vector_label
from memlane.domain.sources import Source, SourceIssue
from tests.fakes.clock import T0, FakeClock
from tests.fakes.embedding import FakeEmbeddingProvider
from tests.fakes.file_source import FakeFileSource
from tests.fakes.index_store import FakeIndexStore
from tests.unit.application.conftest import message

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

    def index_file(self) -> IndexFile:
        return IndexFile(
            preparer=self.preparer,
            store=self.store,
            runtime=self.runtime,
            issues=self.issues,
            clock=self.clock,
            progress=self.progress,
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


def _paths(store: FakeIndexStore) -> list[tuple[str, str]]:
    return [(f.source, f.path) for f in store.files()]


class TestIndexFile:
    def test_a_new_file_is_chunked_embedded_and_written(self) -> None:
        rig = Rig()
        rig.memory.write("MEMORY.md", NOTE)

        follow_ups = rig.index_file()(changed("MEMORY.md"))

        assert _paths(rig.store) == [("memory", "MEMORY.md")]
        assert len(follow_ups) == 1
        indexed = follow_ups[0]
        assert isinstance(indexed, events.FileIndexed)
        assert (indexed.path, indexed.chunks, indexed.embedded, indexed.cached) == (
            "MEMORY.md",
            1,
            1,
            0,
        )
        assert rig.store.chunks_without_vectors(rig.vector_label()) == []

    def test_an_unchanged_hash_only_refreshes_the_stat(self) -> None:
        rig = Rig()
        rig.memory.write("MEMORY.md", NOTE)
        handler = rig.index_file()
        handler(changed("MEMORY.md"))
        assert rig.embedder is not None
        calls = len(rig.embedder.calls)
        rig.memory.set_mtime("MEMORY.md", 5.0)

        assert handler(changed("MEMORY.md")) == []

        assert len(rig.embedder.calls) == calls
        stored = rig.store.file("memory", "MEMORY.md")
        assert stored is not None and stored.mtime == 5.0

    def test_a_changed_file_reuses_cached_vectors_of_its_unchanged_chunks(self) -> None:
        rig = Rig()
        rig.memory.write("MEMORY.md", NOTE)
        handler = rig.index_file()
        handler(changed("MEMORY.md"))
        rig.memory.write("MEMORY.md", OTHER)
        handler(changed("MEMORY.md"))
        rig.memory.write("MEMORY.md", NOTE)  # back to text whose vector is cached

        (indexed,) = handler(changed("MEMORY.md"))

        assert isinstance(indexed, events.FileIndexed)
        assert (indexed.embedded, indexed.cached) == (0, 1)

    def test_a_vanished_file_is_removed_and_its_issue_cleared(self) -> None:
        rig = Rig()
        rig.memory.write("MEMORY.md", NOTE)
        handler = rig.index_file()
        handler(changed("MEMORY.md"))
        rig.issues.report("memory", "MEMORY.md", "old problem")
        rig.memory.delete("MEMORY.md")

        follow_ups = handler(changed("MEMORY.md"))

        assert follow_ups == [events.FileRemoved(occurred_at=T0, source="memory", path="MEMORY.md")]
        assert _paths(rig.store) == []
        assert rig.issues.all() == []

    def test_an_unreadable_file_is_reported_and_the_index_left_alone(self) -> None:
        rig = Rig()
        rig.memory.write("MEMORY.md", NOTE)
        handler = rig.index_file()
        handler(changed("MEMORY.md"))
        rig.memory.unreadable.add("MEMORY.md")

        assert handler(changed("MEMORY.md")) == []

        assert rig.issues.all() == [SourceIssue("MEMORY.md", "permission denied")]
        assert _paths(rig.store) == [("memory", "MEMORY.md")]

    def test_a_binary_file_is_reported_not_indexed(self) -> None:
        rig = Rig()
        rig.memory.write("blob.md", b"\x00\x01\x02binary\x00")

        assert rig.index_file()(changed("blob.md")) == []

        assert _paths(rig.store) == []
        assert [i.path for i in rig.issues.all()] == ["blob.md"]

    def test_every_outcome_counts_one_file_of_progress(self) -> None:
        rig = Rig()
        rig.memory.write("ok.md", NOTE)
        handler = rig.index_file()

        handler(changed("ok.md"))
        handler(changed("missing.md"))

        assert rig.progress.files_done == 2

    def test_a_grown_session_indexes_the_transcript(self) -> None:
        rig = Rig()
        rig.sessions.write("sessions/a.jsonl", message("user", "where do we deploy?"))
        grew = events.SessionGrew(
            occurred_at=T0, path="sessions/a.jsonl", from_size=0, to_size=10, new_messages=1
        )

        (indexed,) = rig.index_file()(grew)

        assert isinstance(indexed, events.FileIndexed)
        assert (indexed.source, indexed.path) == ("sessions", "sessions/a.jsonl")
        assert _paths(rig.store) == [("sessions", "sessions/a.jsonl")]

    def test_other_events_are_refused(self) -> None:
        with pytest.raises(TypeError, match="index_file cannot handle FileDeleted"):
            Rig().index_file()(
                events.FileDeleted(occurred_at=T0, source="memory", path="MEMORY.md")
            )

    def test_an_embedding_failure_writes_keyword_only_and_says_vectors_are_pending(self) -> None:
        rig = Rig()
        assert rig.embedder is not None
        rig.embedder.fail_next(EmbeddingUnavailable("rate limited"))
        rig.memory.write("MEMORY.md", NOTE)

        (indexed,) = rig.index_file()(changed("MEMORY.md"))

        assert isinstance(indexed, events.FileIndexed)
        assert (indexed.chunks, indexed.embedded) == (1, 0)
        assert [c.path for c in rig.store.chunks_without_vectors(rig.vector_label())] == [
            "MEMORY.md"
        ]
        (issue,) = rig.issues.all()
        assert "rate limited" in issue.reason and "vectors pending" in issue.reason

    def test_an_embedding_failure_switches_to_the_fallback_once(self) -> None:
        backup = FakeEmbeddingProvider(id="backup", model="backup-model")
        rig = Rig(fallback=backup)
        assert rig.embedder is not None
        rig.embedder.fail_next(EmbeddingUnavailable("down"))
        rig.embedder.fail_next(EmbeddingUnavailable("down"))
        rig.memory.write("a.md", NOTE)
        rig.memory.write("b.md", OTHER)
        handler = rig.index_file()

        first = handler(changed("a.md"))
        second = handler(changed("b.md"))

        assert [type(e) for e in first] == [events.FileIndexed, events.ProviderFellBack]
        fell_back = first[1]
        assert isinstance(fell_back, events.ProviderFellBack)
        assert (fell_back.from_provider, fell_back.to_provider, fell_back.reason) == (
            "fake",
            "backup",
            "down",
        )
        assert rig.runtime.provider is backup
        # b.md was embedded by the fallback, and no second switch is announced.
        assert [type(e) for e in second] == [events.FileIndexed]
        assert backup.embedded_texts != []

    def test_a_clean_index_clears_an_earlier_issue(self) -> None:
        rig = Rig()
        rig.memory.write("MEMORY.md", NOTE)
        rig.issues.report("memory", "MEMORY.md", "invalid UTF-8")

        rig.index_file()(changed("MEMORY.md"))

        assert rig.issues.all() == []


class TestRemoveFile:
    def test_the_file_leaves_the_index_and_its_issue_is_cleared(self) -> None:
        rig = Rig()
        rig.memory.write("a.md", NOTE)
        rig.memory.write("b.md", OTHER)
        rig.index_file()(changed("a.md"))
        rig.index_file()(changed("b.md"))
        rig.issues.report("memory", "a.md", "something")

        follow_ups = rig.remove_file()(
            events.FileDeleted(occurred_at=T0, source="memory", path="a.md")
        )

        assert follow_ups == [events.FileRemoved(occurred_at=T0, source="memory", path="a.md")]
        assert _paths(rig.store) == [("memory", "b.md")]
        assert rig.issues.all() == []

    def test_removing_an_unknown_file_is_harmless(self) -> None:
        rig = Rig()

        (removed,) = rig.remove_file()(
            events.FileDeleted(occurred_at=T0, source="memory", path="never.md")
        )

        assert isinstance(removed, events.FileRemoved)


class TestRebuildIndex:
    def test_every_source_is_rebuilt_and_the_meta_set(self) -> None:
        rig = Rig()
        rig.memory.write("a.md", NOTE)
        rig.memory.write("b.md", OTHER)
        rig.sessions.write("sessions/s.jsonl", message("user", "hello there"))

        (rebuilt,) = rig.rebuild_index()(reindex())

        assert isinstance(rebuilt, events.IndexRebuilt)
        assert (rebuilt.reason, rebuilt.files, rebuilt.chunks) == ("user_requested", 3, 3)
        assert _paths(rig.store) == [
            ("memory", "a.md"),
            ("memory", "b.md"),
            ("sessions", "sessions/s.jsonl"),
        ]
        assert rig.store.meta() == meta()

    def test_files_gone_from_the_sources_are_gone_from_the_new_index(self) -> None:
        rig = Rig()
        rig.memory.write("a.md", NOTE)
        rig.memory.write("b.md", OTHER)
        rig.index_file()(changed("a.md"))
        rig.index_file()(changed("b.md"))
        rig.memory.delete("b.md")

        rig.rebuild_index()(reindex())

        assert _paths(rig.store) == [("memory", "a.md")]

    def test_a_failure_before_the_swap_keeps_the_previous_index(self) -> None:
        rig = Rig()
        rig.memory.write("a.md", NOTE)
        rig.index_file()(changed("a.md"))
        rig.memory.write("b.md", OTHER)

        def broken_meta() -> IndexMeta:
            raise RuntimeError("cannot resolve settings")

        handler = RebuildIndex(
            preparer=rig.preparer,
            sources=("memory",),
            store=rig.store,
            runtime=rig.runtime,
            issues=rig.issues,
            clock=rig.clock,
            progress=rig.progress,
            wanted_meta=broken_meta,
        )

        with pytest.raises(RuntimeError, match="cannot resolve settings"):
            handler(reindex())

        assert _paths(rig.store) == [("memory", "a.md")]
        assert rig.store.meta() is None

    def test_unreadable_files_are_reported_and_skipped(self) -> None:
        rig = Rig()
        rig.memory.write("a.md", NOTE)
        rig.memory.write("blob.md", b"\x00\x00binary")

        (rebuilt,) = rig.rebuild_index(("memory",))(reindex())

        assert isinstance(rebuilt, events.IndexRebuilt)
        assert rebuilt.files == 1
        assert _paths(rig.store) == [("memory", "a.md")]
        assert [i.path for i in rig.issues.all()] == ["blob.md"]

    def test_listing_problems_of_a_source_are_kept(self) -> None:
        rig = Rig()
        rig.memory.write("a.md", NOTE)
        rig.memory.extra_issues.append(SourceIssue("memory/loop", "symlink loop"))

        rig.rebuild_index(("memory",))(reindex())

        assert rig.issues.all() == [SourceIssue("memory/loop", "symlink loop")]

    def test_a_rebuild_commits_keyword_rows_and_leaves_vectors_to_the_backfill(self) -> None:
        """A large first index must answer at once: the provider is not called."""
        rig = Rig()
        assert rig.embedder is not None
        rig.memory.write("a.md", NOTE)
        rig.memory.write("b.md", OTHER)

        (rebuilt,) = rig.rebuild_index(("memory",))(reindex())

        assert isinstance(rebuilt, events.IndexRebuilt)
        assert rebuilt.files == 2
        assert [c for c in rig.embedder.calls if c.kind == "documents"] == []
        missing = rig.store.chunks_without_vectors(rig.vector_label())
        assert len(missing) == rebuilt.chunks > 0
        assert len(rig.store.search_keyword('"billing"', sources=("memory",), limit=5)) == 1

    def test_a_rebuild_writes_the_vectors_the_cache_holds(self) -> None:
        rig = Rig()
        assert rig.embedder is not None
        rig.memory.write("a.md", NOTE)
        rig.index_file()(changed("a.md"))  # embeds a.md, so its vectors are cached
        calls = len(rig.embedder.calls)
        rig.memory.write("b.md", OTHER)

        rig.rebuild_index(("memory",))(reindex())

        assert len(rig.embedder.calls) == calls
        assert [c.path for c in rig.store.chunks_without_vectors(rig.vector_label())] == ["b.md"]

    def test_progress_reports_the_rebuild_phase_and_its_total(self) -> None:
        rig = Rig()
        rig.memory.write("a.md", NOTE)
        rig.memory.write("b.md", OTHER)

        rig.rebuild_index(("memory",))(reindex())

        phases = [(r.phase, r.files_total) for r in rig.reports]
        assert ("rebuild", 2) in phases
        assert rig.reports[-1].files_done == 2


class TestFirstIndex:
    """No index yet: the files go straight into the live store, one write each."""

    def test_it_is_written_file_by_file_into_the_live_store_and_ended_by_the_meta(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        rig = Rig()
        rig.memory.write("a.md", NOTE)
        rig.memory.write("b.md", OTHER)
        rig.sessions.write("sessions/s.jsonl", message("user", "hello there"))
        monkeypatch.setattr(rig.store, "begin_rebuild", _no_rebuild_aside)
        seen: list[tuple[int, int]] = []
        write = rig.store.replace_file

        def spy(*args: Any) -> None:
            state = rig.store.first_index()
            assert state is not None and state.here and rig.store.meta() is None
            seen.append((state.files_done, state.files_total))
            write(*args)

        monkeypatch.setattr(rig.store, "replace_file", spy)

        (rebuilt,) = rig.rebuild_index()(reindex())

        assert isinstance(rebuilt, events.IndexRebuilt) and rebuilt.files == 3
        assert seen == [(0, 3), (1, 3), (2, 3)]  # each file committed before the next
        assert rig.store.meta() == meta()
        assert rig.store.first_index() is None

    def test_an_interrupted_one_is_completed_keeping_the_unchanged_files(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        rig = Rig()
        for name, text in (("a.md", NOTE), ("b.md", OTHER), ("gone.md", NOTE + "x\n")):
            rig.memory.write(name, text)
            rig.index_file()(changed(name))  # what the killed run wrote
        rig.store.first_index_elsewhere(meta(), 3, running=False)
        rig.memory.write("b.md", OTHER + "\nedited after the kill\n")
        rig.memory.delete("gone.md")
        rig.memory.write("c.md", "# New\n\nwritten after the kill\n")
        monkeypatch.setattr(rig.store, "begin_rebuild", _no_rebuild_aside)
        written: list[str] = []
        write = rig.store.replace_file

        def spy(file: IndexedFile, *rest: Any) -> None:
            written.append(file.path)
            write(file, *rest)

        monkeypatch.setattr(rig.store, "replace_file", spy)

        (rebuilt,) = rig.rebuild_index()(reindex())

        assert isinstance(rebuilt, events.IndexRebuilt) and rebuilt.files == 3
        assert sorted(written) == ["b.md", "c.md"]  # a.md kept as the killed run wrote it
        assert _paths(rig.store) == [("memory", "a.md"), ("memory", "b.md"), ("memory", "c.md")]
        assert rig.store.meta() == meta() and rig.store.first_index() is None

    def test_one_another_process_writes_is_left_to_it(self) -> None:
        rig = Rig()
        rig.memory.write("a.md", NOTE)
        rig.store.first_index_elsewhere(meta(), 1, running=True)

        assert rig.rebuild_index()(reindex()) == []

        assert rig.store.files() == [] and rig.store.meta() is None

    def test_rows_of_another_build_are_replaced_by_a_rebuild_aside(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        rig = Rig()
        rig.memory.write("a.md", NOTE)
        rig.index_file()(changed("a.md"))
        rig.store.first_index_elsewhere(replace(meta(), chunk_tokens=200), 1, running=False)
        rebuilds: list[IndexRebuild] = []
        begin = rig.store.begin_rebuild

        def aside() -> IndexRebuild:
            rebuilds.append(begin())
            return rebuilds[-1]

        monkeypatch.setattr(rig.store, "begin_rebuild", aside)

        rig.rebuild_index()(reindex())

        assert len(rebuilds) == 1
        assert rig.store.meta() == meta() and rig.store.first_index() is None


def _no_rebuild_aside() -> None:
    raise AssertionError("a first index must not be built aside")


class TestRoutes:
    def test_each_source_event_has_exactly_its_handler(self) -> None:
        rig = Rig()
        index, remove, rebuild = rig.index_file(), rig.remove_file(), rig.rebuild_index()

        table = build_routes(index_file=index, remove_file=remove, rebuild_index=rebuild)

        assert table == {
            events.FileChanged: (index,),
            events.SessionGrew: (index,),
            events.FileDeleted: (remove,),
            events.ReindexRequired: (rebuild,),
        }
