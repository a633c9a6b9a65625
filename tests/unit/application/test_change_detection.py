"""ChangeDetector: the diff between the sources and the index's file table, as events."""

from __future__ import annotations

from dataclasses import dataclass, field

from memlane.application.change_detection import ChangeDetector, Detection
from memlane.application.issues import IssueBoard
from memlane.application.ports.index_store import IndexedFile
from memlane.domain import events
from memlane.domain.chunks import ContentHash
from memlane.domain.config import SessionSyncSettings
from memlane.domain.hashing import bytes_hash
from memlane.domain.sources import Source, SourceIssue
from tests.fakes.clock import T0, FakeClock
from tests.fakes.file_source import FakeFileSource
from tests.fakes.index_store import FakeIndexStore
from tests.unit.application.conftest import message


@dataclass
class Rig:
    memory: FakeFileSource = field(default_factory=lambda: FakeFileSource(source_name="memory"))
    sessions: FakeFileSource = field(default_factory=lambda: FakeFileSource(source_name="sessions"))
    store: FakeIndexStore = field(default_factory=FakeIndexStore)
    issues: IssueBoard = field(default_factory=IssueBoard)
    thresholds: SessionSyncSettings = field(
        default_factory=lambda: SessionSyncSettings(delta_bytes=100_000, delta_messages=3)
    )

    def detect(self, *, respect_thresholds: bool = False) -> Detection:
        detector = ChangeDetector(
            sources={"memory": self.memory, "sessions": self.sessions},
            store=self.store,
            issues=self.issues,
            clock=FakeClock(),
            session_thresholds=self.thresholds,
        )
        return detector.detect(respect_thresholds=respect_thresholds)

    def mark_indexed(self, source: Source, path: str, *, hashed: bool = False) -> None:
        """Record the file's current stat in the index, as a handler would after indexing it
        (with its real content hash when `hashed`)."""
        reader = self.memory if source == "memory" else self.sessions
        stat = reader.stat(path)
        digest = bytes_hash(reader.read_bytes(path)) if hashed else ContentHash("h")
        file = IndexedFile(source, path, digest, stat.mtime, stat.size)
        self.store.replace_file(file, [], [], "m")


def session(*texts: str) -> str:
    return "".join(message("user", t) for t in texts)


class TestMemoryFiles:
    def test_new_files_are_changed_and_counted_on_disk(self) -> None:
        rig = Rig()
        rig.memory.write("MEMORY.md", "a", mtime=10.0)

        found = rig.detect()

        assert found.events == [
            events.FileChanged(
                occurred_at=T0, source="memory", path="MEMORY.md", mtime=10.0, size=1
            )
        ]
        assert found.on_disk == {"memory": 1, "sessions": 0}

    def test_a_file_with_the_indexed_stat_is_unchanged(self) -> None:
        rig = Rig()
        rig.memory.write("MEMORY.md", "a")
        rig.mark_indexed("memory", "MEMORY.md")

        found = rig.detect()

        assert (found.events, found.unchanged) == ([], 1)

    def test_a_new_mtime_alone_is_a_change(self) -> None:
        rig = Rig()
        rig.memory.write("MEMORY.md", "a")
        rig.mark_indexed("memory", "MEMORY.md")
        rig.memory.set_mtime("MEMORY.md", 99.0)

        (change,) = rig.detect().events

        assert isinstance(change, events.FileChanged) and change.mtime == 99.0

    def test_a_new_mtime_over_the_indexed_bytes_is_logged_and_counted_unchanged(self) -> None:
        rig = Rig()
        rig.memory.write("MEMORY.md", "a")
        rig.mark_indexed("memory", "MEMORY.md", hashed=True)
        rig.memory.set_mtime("MEMORY.md", 99.0)

        found = rig.detect()

        (change,) = found.events  # its handler records the new stat
        assert isinstance(change, events.FileChanged) and found.unchanged == 1

    def test_other_bytes_of_the_indexed_size_are_not_unchanged(self) -> None:
        rig = Rig()
        rig.memory.write("MEMORY.md", "a")
        rig.mark_indexed("memory", "MEMORY.md", hashed=True)
        rig.memory.write("MEMORY.md", "b")

        found = rig.detect()

        assert (len(found.events), found.unchanged) == (1, 0)

    def test_a_file_of_another_size_is_not_read(self) -> None:
        rig = Rig()
        rig.memory.write("MEMORY.md", "a")
        rig.mark_indexed("memory", "MEMORY.md", hashed=True)
        rig.memory.write("MEMORY.md", "ab")
        reads = len(rig.memory.reads)

        found = rig.detect()

        assert (len(found.events), found.unchanged) == (1, 0)
        assert len(rig.memory.reads) == reads

    def test_a_grown_memory_file_is_a_change_not_a_session_growth(self) -> None:
        rig = Rig()
        rig.memory.write("MEMORY.md", "a")
        rig.mark_indexed("memory", "MEMORY.md")
        rig.memory.append("MEMORY.md", "b")

        (change,) = rig.detect(respect_thresholds=True).events

        assert isinstance(change, events.FileChanged)

    def test_an_indexed_file_missing_from_its_source_is_deleted(self) -> None:
        rig = Rig()
        rig.memory.write("gone.md", "a")
        rig.mark_indexed("memory", "gone.md")
        rig.memory.delete("gone.md")

        found = rig.detect()

        assert found.events == [events.FileDeleted(occurred_at=T0, source="memory", path="gone.md")]

    def test_listing_problems_go_to_the_issue_board(self) -> None:
        rig = Rig()
        rig.memory.extra_issues.append(SourceIssue("memory/x", "permission denied"))

        rig.detect()

        assert rig.issues.all() == [SourceIssue("memory/x", "permission denied")]


class TestSessions:
    def test_a_new_transcript_is_a_file_change(self) -> None:
        rig = Rig()
        rig.sessions.write("sessions/a.jsonl", session("hi"))

        (change,) = rig.detect(respect_thresholds=True).events

        assert isinstance(change, events.FileChanged) and change.source == "sessions"

    def test_growth_below_both_thresholds_is_held_back_on_automatic_syncs(self) -> None:
        rig = Rig()
        rig.sessions.write("sessions/a.jsonl", session("one"))
        rig.mark_indexed("sessions", "sessions/a.jsonl")
        rig.sessions.append("sessions/a.jsonl", session("two", "three"))

        found = rig.detect(respect_thresholds=True)

        assert (found.events, found.held_back) == ([], 1)

    def test_growth_past_the_message_threshold_is_a_session_growth(self) -> None:
        rig = Rig()
        rig.sessions.write("sessions/a.jsonl", session("one"))
        rig.mark_indexed("sessions", "sessions/a.jsonl")
        before = rig.sessions.stat("sessions/a.jsonl").size
        rig.sessions.append("sessions/a.jsonl", session("two", "three", "four"))
        after = rig.sessions.stat("sessions/a.jsonl").size

        (grew,) = rig.detect(respect_thresholds=True).events

        assert grew == events.SessionGrew(
            occurred_at=T0,
            path="sessions/a.jsonl",
            from_size=before,
            to_size=after,
            new_messages=3,
        )

    def test_growth_past_the_byte_threshold_is_a_session_growth(self) -> None:
        rig = Rig(thresholds=SessionSyncSettings(delta_bytes=50, delta_messages=1000))
        rig.sessions.write("sessions/a.jsonl", session("one"))
        rig.mark_indexed("sessions", "sessions/a.jsonl")
        rig.sessions.append("sessions/a.jsonl", session("x" * 60))

        (grew,) = rig.detect(respect_thresholds=True).events

        assert isinstance(grew, events.SessionGrew) and grew.new_messages == 1

    def test_lines_that_are_not_messages_do_not_count_towards_the_threshold(self) -> None:
        rig = Rig()
        rig.sessions.write("sessions/a.jsonl", session("one"))
        rig.mark_indexed("sessions", "sessions/a.jsonl")
        rig.sessions.append("sessions/a.jsonl", '{"type": "tool"}\n' * 5 + "\n\n\n")

        found = rig.detect(respect_thresholds=True)

        assert found.held_back == 1

    def test_a_line_indexed_half_written_counts_once_completed(self) -> None:
        rig = Rig(thresholds=SessionSyncSettings(delta_bytes=100_000, delta_messages=2))
        whole = session("one", "two")
        rig.sessions.write("sessions/a.jsonl", whole[: len(session("one")) + 20])
        rig.mark_indexed("sessions", "sessions/a.jsonl")  # "two" was cut: not indexed
        rig.sessions.write("sessions/a.jsonl", whole + session("three"))

        (grew,) = rig.detect(respect_thresholds=True).events

        assert isinstance(grew, events.SessionGrew) and grew.new_messages == 2

    def test_a_last_line_indexed_without_its_newline_is_not_counted_again(self) -> None:
        rig = Rig(thresholds=SessionSyncSettings(delta_bytes=100_000, delta_messages=2))
        rig.sessions.write("sessions/a.jsonl", session("one").rstrip("\n"))
        rig.mark_indexed("sessions", "sessions/a.jsonl")  # "one" was indexed as it was
        rig.sessions.append("sessions/a.jsonl", "\n" + session("two"))

        found = rig.detect(respect_thresholds=True)

        assert (found.events, found.held_back) == ([], 1)

    def test_growth_of_an_empty_transcript_counts_its_messages(self) -> None:
        rig = Rig(thresholds=SessionSyncSettings(delta_bytes=100_000, delta_messages=1))
        rig.sessions.write("sessions/a.jsonl", "")
        rig.mark_indexed("sessions", "sessions/a.jsonl")
        rig.sessions.append("sessions/a.jsonl", session("one"))

        (grew,) = rig.detect(respect_thresholds=True).events

        assert isinstance(grew, events.SessionGrew) and grew.new_messages == 1

    def test_thresholds_of_zero_let_any_growth_through(self) -> None:
        rig = Rig(thresholds=SessionSyncSettings(delta_bytes=0, delta_messages=0))
        rig.sessions.write("sessions/a.jsonl", session("one"))
        rig.mark_indexed("sessions", "sessions/a.jsonl")
        rig.sessions.append("sessions/a.jsonl", "\n")

        (grew,) = rig.detect(respect_thresholds=True).events

        assert isinstance(grew, events.SessionGrew) and grew.new_messages == 0

    def test_explicit_syncs_ignore_the_thresholds(self) -> None:
        rig = Rig()
        rig.sessions.write("sessions/a.jsonl", session("one"))
        rig.mark_indexed("sessions", "sessions/a.jsonl")
        rig.sessions.append("sessions/a.jsonl", session("two"))

        (grew,) = rig.detect(respect_thresholds=False).events

        assert isinstance(grew, events.SessionGrew) and grew.new_messages == 1

    def test_a_shorter_transcript_was_rewritten(self) -> None:
        rig = Rig()
        rig.sessions.write("sessions/a.jsonl", session("one", "two", "three"))
        rig.mark_indexed("sessions", "sessions/a.jsonl")
        rig.sessions.write("sessions/a.jsonl", session("compacted"))

        (grew,) = rig.detect(respect_thresholds=True).events

        assert isinstance(grew, events.SessionGrew)
        assert grew.rewritten and grew.new_messages == 0
        assert grew.to_size < grew.from_size

    def test_the_same_size_with_a_new_mtime_is_left_to_the_hash(self) -> None:
        rig = Rig()
        rig.sessions.write("sessions/a.jsonl", session("one"))
        rig.mark_indexed("sessions", "sessions/a.jsonl")
        rig.sessions.set_mtime("sessions/a.jsonl", 5.0)

        (change,) = rig.detect(respect_thresholds=True).events

        assert isinstance(change, events.FileChanged) and change.source == "sessions"

    def test_an_unreadable_tail_counts_no_messages(self) -> None:
        rig = Rig(thresholds=SessionSyncSettings(delta_bytes=100_000, delta_messages=1))
        rig.sessions.write("sessions/a.jsonl", session("one"))
        rig.mark_indexed("sessions", "sessions/a.jsonl")
        rig.sessions.append("sessions/a.jsonl", session("two"))
        rig.sessions.max_file_bytes = 10  # reading now fails with FileTooLarge

        found = rig.detect(respect_thresholds=True)

        assert (found.events, found.held_back) == ([], 1)

    def test_a_deleted_transcript_is_deleted_from_its_source(self) -> None:
        rig = Rig()
        rig.sessions.write("sessions/a.jsonl", session("one"))
        rig.mark_indexed("sessions", "sessions/a.jsonl")
        rig.sessions.delete("sessions/a.jsonl")

        (gone,) = rig.detect().events

        assert gone == events.FileDeleted(
            occurred_at=T0, source="sessions", path="sessions/a.jsonl"
        )
