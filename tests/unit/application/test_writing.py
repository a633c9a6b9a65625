"""The memory_write use case on fakes: where notes go, what is refused, the index catching up."""

from __future__ import annotations

import pytest

from memlane.application.ports.file_source import FileRefused, FileTooLarge
from memlane.application.ports.note_writer import NoteWriteFailed
from memlane.application.sync_report import HOST_BUSY, REBUILD_ELSEWHERE, rebuild_skipped_report
from memlane.application.sync_trigger import SyncTrigger
from memlane.application.vector_backfill import SEARCH_BACKFILL_LIMIT
from memlane.application.writing import (
    MAX_NOTE_BYTES,
    MAX_TEXT_BYTES,
    WriteNote,
    check_note_path,
    daily_note_path,
)
from memlane.domain.errors import InvalidQuery
from memlane.domain.redaction import Redactor
from tests.fakes.clock import FakeClock
from tests.fakes.note_writer import FakeNoteWriter
from tests.fakes.sync_lock import FakeSyncLock
from tests.unit.application.conftest import World


def _use_case(
    world: World,
    writer: FakeNoteWriter,
    max_text_bytes: int = MAX_TEXT_BYTES,
    max_note_bytes: int = MAX_NOTE_BYTES,
) -> WriteNote:
    manager = world.manager()
    return WriteNote(
        writer=writer,
        clock=world.clock,
        refresh=manager.sync_written,
        max_text_bytes=max_text_bytes,
        max_note_bytes=max_note_bytes,
    )


class TestWriteNote:
    def test_default_appends_to_todays_daily_note_and_search_finds_it(self, world: World) -> None:
        writer = FakeNoteWriter(files=world.memory)
        manager = world.manager()
        write = WriteNote(writer=writer, clock=world.clock, refresh=manager.sync_written)

        first = write("Priya prefers async stand-ups.")
        second = write("The VPN certificate expires in March.")

        assert first.path == second.path == "memory/2026-11-20.md"
        assert world.memory.read_bytes(first.path) == (
            b"Priya prefers async stand-ups.\nThe VPN certificate expires in March.\n"
        )
        assert second.indexed and second.size == len(world.memory.read_bytes(first.path))
        hits = manager.search("VPN certificate expires").results
        assert hits[0].path == "memory/2026-11-20.md"

    def test_the_daily_note_follows_the_clock(self, world: World) -> None:
        clock = FakeClock()
        clock.advance(86_400 * 12)

        assert daily_note_path(clock) == "memory/2026-12-02.md"

    def test_a_named_note_can_be_replaced(self, world: World) -> None:
        writer = FakeNoteWriter(files=world.memory)
        write = _use_case(world, writer)

        write("old plan", path="memory/projects/atlas.md")
        result = write("new plan", path="memory/projects/atlas.md", mode="replace")

        assert result.mode == "replace"
        assert world.memory.read_bytes("memory/projects/atlas.md") == b"new plan\n"

    def test_memory_md_may_be_written(self, world: World) -> None:
        writer = FakeNoteWriter(files=world.memory)

        result = _use_case(world, writer)("Team: Priya, Omar.", path="MEMORY.md")

        assert result.path == "MEMORY.md"

    @pytest.mark.parametrize(
        "path",
        [
            "../outside.md",
            "/etc/passwd.md",
            "notes/x.md",
            "memory/../MEMORY.md",
            "memory/./x.md",
            "memory//x.md",
            "memory/.git/x.md",
            "memory/node_modules/x.md",
            "memory/x.txt",
            "memory/.md",
            "memory\\x.md",
            "sessions/chat.jsonl",
            "",
            "memory/a\nb.md",
            "memory/tab\there.md",
            "memory/red\x1b[31m.md",
            "memory/c1\x9b31m.md",
            "memory/del\x7f.md",
        ],
    )
    def test_paths_outside_the_allow_list_are_refused_before_any_write(
        self, world: World, path: str
    ) -> None:
        writer = FakeNoteWriter(files=world.memory)

        with pytest.raises(FileRefused):
            _use_case(world, writer)("x", path=path)

        assert writer.calls == []

    @pytest.mark.parametrize(
        ("path", "why"),
        [
            ("memory/.hidden.md", "a name starting with '.' makes a hidden file: drop the dot"),
            ("memory/.md", "a name starting with '.' makes a hidden file: drop the dot"),
            ("memory/x.txt", "notes are Markdown files: end the name in .md"),
            ("memory/.config/a.md", "folder '.config' is never indexed"),
            # Said before any write: the disk's own "File name too long" came with advice to
            # check permissions and the disk.
            ("memory/" + "a" * 253 + ".md", "a name in the path is longer than 255 bytes"),
            ("memory/" + "é" * 128 + "/a.md", "a name in the path is longer than 255 bytes"),
        ],
    )
    def test_a_refusal_gives_the_reason_that_applies(self, path: str, why: str) -> None:
        """ ".hidden.md" was refused for not ending in .md."""
        with pytest.raises(FileRefused) as refused:
            check_note_path(path)

        assert refused.value.reason == why

    def test_allowed_paths_pass_the_check_unchanged(self) -> None:
        assert check_note_path("memory/a/b/c.md") == "memory/a/b/c.md"
        assert check_note_path("memory/Notes.MD") == "memory/Notes.MD"

    def test_blank_and_oversized_text_and_unknown_modes_are_invalid(self, world: World) -> None:
        writer = FakeNoteWriter(files=world.memory)
        write = _use_case(world, writer, max_text_bytes=10)

        with pytest.raises(InvalidQuery, match="text required"):
            write("   ")
        with pytest.raises(InvalidQuery, match="at most 10"):
            write("x" * 11)
        with pytest.raises(InvalidQuery, match="mode"):
            write("x", mode="overwrite")  # type: ignore[arg-type]  # callers outside mypy

        assert writer.calls == []

    def test_the_note_size_limit_is_the_writers_to_enforce(self, world: World) -> None:
        writer = FakeNoteWriter(files=world.memory)
        write = _use_case(world, writer, max_note_bytes=20)
        write("0123456789")

        with pytest.raises(FileTooLarge):
            write("0123456789")

        assert world.memory.read_bytes("memory/2026-11-20.md") == b"0123456789\n"

    def test_a_failed_write_does_not_refresh(self, world: World) -> None:
        refreshed: list[int] = []
        writer = FakeNoteWriter(files=world.memory, fail_next=True)
        write = WriteNote(writer=writer, clock=world.clock, refresh=lambda: refreshed.append(1))

        with pytest.raises(NoteWriteFailed):
            write("x")

        assert refreshed == []

    def test_a_failed_refresh_keeps_the_note_and_says_the_index_is_behind(
        self, world: World
    ) -> None:
        def broken() -> None:
            raise RuntimeError("store locked")

        writer = FakeNoteWriter(files=world.memory)
        result = WriteNote(writer=writer, clock=world.clock, refresh=broken)("keep me")

        assert not result.indexed and result.index_error == "store locked"
        assert world.memory.read_bytes(result.path) == b"keep me\n"

    def test_a_refresh_skipped_for_another_process_says_the_index_is_behind(
        self, world: World
    ) -> None:
        writer = FakeNoteWriter(files=world.memory)
        skipped = rebuild_skipped_report(SyncTrigger.EXPLICIT, [])
        result = WriteNote(writer=writer, clock=world.clock, refresh=lambda: skipped)("keep me")

        assert not result.indexed
        assert result.index_error == REBUILD_ELSEWHERE
        assert world.memory.read_bytes(result.path) == b"keep me\n"


class TestRedactedWrites:
    """Issue #32 items 1 and 3: what an agent writes is redacted unless it opts out, and text
    the indexer would skip is refused."""

    KEY = "sk-proj-" + "Q7vXk2LmN9pR4sT8wY3zA6bC1dE5fG0h"
    URL = "postgresql://app:Hunter2-very-secret@db.internal:5432/prod"

    def _write(self, world: World, writer: FakeNoteWriter) -> WriteNote:
        return WriteNote(
            writer=writer,
            clock=world.clock,
            refresh=world.manager().sync,
            redact=Redactor().redaction,
        )

    def test_secrets_are_masked_and_the_result_names_their_kinds(self, world: World) -> None:
        writer = FakeNoteWriter(files=world.memory)

        result = self._write(world, writer)(
            f"OPENAI_API_KEY={self.KEY}\nThe database is {self.URL}\nand {self.KEY} again."
        )

        stored = world.memory.read_bytes(result.path).decode()
        assert self.KEY not in stored and "Hunter2-very-secret" not in stored
        assert "db.internal:5432/prod" in stored  # the rest of the note stays
        assert result.redacted is True
        assert dict(result.masked) == {"assignment": 1, "sk-dash": 1, "url-password": 1}
        assert self.KEY not in repr(result) and "Hunter2" not in repr(result)

    def test_opting_out_writes_the_text_as_given(self, world: World) -> None:
        writer = FakeNoteWriter(files=world.memory)

        result = self._write(world, writer)(f"keep {self.KEY}", redact=False)

        assert world.memory.read_bytes(result.path) == f"keep {self.KEY}\n".encode()
        assert result.redacted is False and result.masked == ()

    def test_text_without_secrets_reports_nothing_masked(self, world: World) -> None:
        writer = FakeNoteWriter(files=world.memory)

        result = self._write(world, writer)("Priya prefers async stand-ups.")

        assert result.redacted is True and result.masked == ()

    @pytest.mark.parametrize("text", ["before\x00after", "\x00", "a\ud800b"])
    def test_text_the_indexer_could_not_read_is_refused_and_nothing_written(
        self, world: World, text: str
    ) -> None:
        writer = FakeNoteWriter(files=world.memory)

        with pytest.raises(InvalidQuery, match=r"NUL byte|lone surrogate"):
            self._write(world, writer)(text, path="memory/probe.md")

        assert writer.calls == []


class TestTheWritesOwnSync:
    """The tool call must not wait for the index's whole vector backlog or another host."""

    def test_a_write_beside_a_large_backlog_is_indexed_without_embedding_it(
        self, world: World
    ) -> None:
        for n in range(SEARCH_BACKFILL_LIMIT + 10):
            world.memory.write(f"memory/n{n:03}.md", f"# Note {n}\n\nBacklog entry {n}.\n")
        manager = world.manager()
        manager.sync(wait_for_vectors=False)  # keyword rows in, every vector still owed
        assert world.embedder is not None
        world.embedder.calls.clear()
        write = WriteNote(
            writer=FakeNoteWriter(files=world.memory),
            clock=world.clock,
            refresh=manager.sync_written,
        )

        result = write("The harbour crane is serviced on Mondays.")

        assert result.indexed and result.index_error is None
        embedded = world.embedder.embedded_texts
        assert not any("Backlog" in text for text in embedded)  # the background's to embed
        assert any("harbour crane" in text for text in embedded)  # the note itself, at once
        assert manager.search("harbour crane").results  # found by its keywords at once

    def test_a_write_while_another_host_syncs_says_the_index_is_behind(self, world: World) -> None:
        world.host_lock = FakeSyncLock()
        world.memory.write("MEMORY.md", "# Ops\n\nDeploys on Fridays.\n")
        manager = world.manager()
        manager.sync()
        world.host_lock.held_elsewhere = True  # the fake fails a test that would wait
        write = WriteNote(
            writer=FakeNoteWriter(files=world.memory),
            clock=world.clock,
            refresh=manager.sync_written,
        )

        result = write("The harbour crane is serviced on Mondays.")

        assert not result.indexed and result.index_error == HOST_BUSY
        on_disk = world.memory.read_bytes(result.path)
        assert on_disk.endswith(b"Mondays.\n")  # written all the same
