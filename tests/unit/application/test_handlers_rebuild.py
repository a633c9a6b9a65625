"""The RebuildIndex handler, called directly on fakes: a rebuild aside, and a first index in place."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from memlane.application.handlers import RebuildIndex
from memlane.application.ports.index_store import IndexedFile, IndexRebuild
from memlane.domain import events
from memlane.domain.index_meta import IndexMeta
from memlane.domain.sources import SourceIssue
from tests.unit.application._handlers_support import (
    NOTE,
    OTHER,
    Rig,
    changed,
    meta,
    reindex,
    stored_paths,
)
from tests.unit.application.conftest import message


class TestRebuildIndex:
    def test_every_source_is_rebuilt_and_the_meta_set(self) -> None:
        rig = Rig()
        rig.memory.write("a.md", NOTE)
        rig.memory.write("b.md", OTHER)
        rig.sessions.write("sessions/s.jsonl", message("user", "hello there"))

        (rebuilt,) = rig.rebuild_index()(reindex())

        assert isinstance(rebuilt, events.IndexRebuilt)
        assert (rebuilt.reason, rebuilt.files, rebuilt.chunks) == ("user_requested", 3, 3)
        assert stored_paths(rig.store) == [
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

        assert stored_paths(rig.store) == [("memory", "a.md")]

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

        assert stored_paths(rig.store) == [("memory", "a.md")]
        assert rig.store.meta() is None

    def test_unreadable_files_are_reported_and_skipped(self) -> None:
        rig = Rig()
        rig.memory.write("a.md", NOTE)
        rig.memory.write("blob.md", b"\x00\x00binary")

        (rebuilt,) = rig.rebuild_index(("memory",))(reindex())

        assert isinstance(rebuilt, events.IndexRebuilt)
        assert rebuilt.files == 1
        assert stored_paths(rig.store) == [("memory", "a.md")]
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
        assert stored_paths(rig.store) == [
            ("memory", "a.md"),
            ("memory", "b.md"),
            ("memory", "c.md"),
        ]
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
