"""The IndexFile and RemoveFile handlers, called directly on fakes, and the routes of all three."""

from __future__ import annotations

import pytest

from memlane.application.handlers import build_routes
from memlane.application.ports.embedding import EmbeddingUnavailable
from memlane.domain import events
from memlane.domain.index_meta import vector_label
from memlane.domain.sources import SourceIssue
from tests.fakes.clock import T0
from tests.fakes.embedding import FakeEmbeddingProvider
from tests.unit.application._handlers_support import (
    NOTE,
    OTHER,
    Rig,
    changed,
    stored_paths,
)
from tests.unit.application.conftest import message


class TestIndexFile:
    def test_a_new_file_is_chunked_embedded_and_written(self) -> None:
        rig = Rig()
        rig.memory.write("MEMORY.md", NOTE)

        follow_ups = rig.index_file()(changed("MEMORY.md"))

        assert stored_paths(rig.store) == [("memory", "MEMORY.md")]
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
        assert stored_paths(rig.store) == []
        assert rig.issues.all() == []

    def test_an_unreadable_file_is_reported_and_the_index_left_alone(self) -> None:
        rig = Rig()
        rig.memory.write("MEMORY.md", NOTE)
        handler = rig.index_file()
        handler(changed("MEMORY.md"))
        rig.memory.unreadable.add("MEMORY.md")

        assert handler(changed("MEMORY.md")) == []

        assert rig.issues.all() == [SourceIssue("MEMORY.md", "permission denied")]
        assert stored_paths(rig.store) == [("memory", "MEMORY.md")]

    def test_a_binary_file_is_reported_not_indexed(self) -> None:
        rig = Rig()
        rig.memory.write("blob.md", b"\x00\x01\x02binary\x00")

        assert rig.index_file()(changed("blob.md")) == []

        assert stored_paths(rig.store) == []
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
        assert stored_paths(rig.store) == [("sessions", "sessions/a.jsonl")]

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

    def test_after_the_switch_the_index_records_the_fallbacks_model_and_holds_its_vectors(
        self,
    ) -> None:
        backup = FakeEmbeddingProvider(id="backup", model="backup-model", dimensions=8)
        rig = Rig(fallback=backup)
        assert rig.embedder is not None
        rig.store.set_meta(rig.wanted_meta())  # an index the configured provider built
        rig.embedder.fail_next(EmbeddingUnavailable("down"))
        rig.memory.write("a.md", NOTE)
        rig.memory.write("b.md", OTHER)
        handler = rig.index_file()

        handler(changed("a.md"))
        handler(changed("b.md"))

        stored = rig.store.meta()
        assert stored is not None
        assert (stored.provider, stored.model, stored.dimensions) == ("backup", "backup-model", 8)
        # b.md's chunk holds the fallback's vector; a.md's waits for the backfill.
        progress = rig.store.vector_progress(vector_label("backup-model", backup.key))
        assert (progress.done, progress.total) == (1, 2)

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
        assert stored_paths(rig.store) == [("memory", "b.md")]
        assert rig.issues.all() == []

    def test_removing_an_unknown_file_is_harmless(self) -> None:
        rig = Rig()

        (removed,) = rig.remove_file()(
            events.FileDeleted(occurred_at=T0, source="memory", path="never.md")
        )

        assert isinstance(removed, events.FileRemoved)


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
