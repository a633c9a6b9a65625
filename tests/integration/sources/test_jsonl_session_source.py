"""Integration: JsonlSessionSource on real transcript files under tmp_path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memlane.adapters.sources.jsonl_sessions import JsonlSessionSource
from memlane.application.ports.file_source import FileMissing, FileRefused, FileUnreadable

pytestmark = pytest.mark.integration


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    folder = tmp_path / "agents" / "main" / "sessions"
    folder.mkdir(parents=True)
    return folder


class TestScan:
    def test_only_transcripts_directly_in_the_folder_are_listed(self, sessions: Path) -> None:
        (sessions / "b.jsonl").write_text("{}\n")
        (sessions / "a.JSONL").write_text("{}\n")
        (sessions / "notes.txt").write_text("x")
        (sessions / "archive").mkdir()
        (sessions / "archive" / "old.jsonl").write_text("{}\n")
        (sessions / "dir.jsonl").mkdir()

        result = JsonlSessionSource(sessions_dir=str(sessions)).scan()

        assert [f.path for f in result.files] == ["sessions/a.JSONL", "sessions/b.jsonl"]
        assert {f.source for f in result.files} == {"sessions"}
        assert result.issues == []

    def test_a_missing_folder_is_no_session_yet_not_a_problem(self, tmp_path: Path) -> None:
        result = JsonlSessionSource(sessions_dir=str(tmp_path / "nope")).scan()

        assert result.files == []
        assert result.issues == []

    def test_a_missing_folder_named_by_sessions_dir_is_reported(self, tmp_path: Path) -> None:
        """A typo in `sessions.dir` meant no transcript was ever indexed, and nothing said so."""
        missing = tmp_path / "typo-sesions"

        result = JsonlSessionSource(sessions_dir=str(missing), configured=True).scan()

        assert result.files == []
        assert [(i.path, i.reason) for i in result.issues] == [
            ("sessions", f"sessions folder does not exist: {missing} (sessions.dir)")
        ]

    def test_links_are_followed_only_inside_the_folder(
        self, sessions: Path, tmp_path: Path
    ) -> None:
        (sessions / "real.jsonl").write_text("{}\n")
        (sessions / "alias.jsonl").symlink_to(sessions / "real.jsonl")
        (tmp_path / "other.jsonl").write_text("{}\n")
        (sessions / "escape.jsonl").symlink_to(tmp_path / "other.jsonl")
        source = JsonlSessionSource(sessions_dir=str(sessions))

        result = source.scan()

        assert [f.path for f in result.files] == ["sessions/alias.jsonl"]  # deduped by inode
        assert [i.path for i in result.issues] == ["sessions/escape.jsonl"]
        with pytest.raises(FileRefused):
            source.read_bytes("sessions/escape.jsonl")

    def test_a_link_to_a_file_that_is_no_transcript_is_reported_and_refused(
        self, sessions: Path
    ) -> None:
        """Issue #32 item 4: the link's target must be a transcript, not only its name."""
        (sessions / "notes.txt").write_text("API_TOKEN=not-for-search\n")
        (sessions / "notes.jsonl").symlink_to(sessions / "notes.txt")
        source = JsonlSessionSource(sessions_dir=str(sessions))

        result = source.scan()

        assert result.files == []
        assert [(i.path, i.reason) for i in result.issues] == [
            ("sessions/notes.jsonl", "symlink target is not a .jsonl transcript")
        ]
        with pytest.raises(FileRefused, match=r"not a \.jsonl transcript"):
            source.read_bytes("sessions/notes.jsonl")

    def test_a_fifo_is_reported_and_unreadable(self, sessions: Path) -> None:
        os.mkfifo(sessions / "pipe.jsonl")
        source = JsonlSessionSource(sessions_dir=str(sessions))

        assert [i.reason for i in source.scan().issues] == ["not a regular file"]
        with pytest.raises(FileUnreadable):
            source.read_bytes("sessions/pipe.jsonl")


class TestTailing:
    def test_growth_is_read_from_the_last_offset(self, sessions: Path) -> None:
        transcript = sessions / "s.jsonl"
        transcript.write_bytes(b'{"n":1}\n')
        source = JsonlSessionSource(sessions_dir=str(sessions))
        first = source.read_bytes("sessions/s.jsonl")
        with open(transcript, "ab") as f:
            f.write(b'{"n":2}\n{"n":3}\n')

        tail = source.read_bytes("sessions/s.jsonl", len(first))

        assert tail == b'{"n":2}\n{"n":3}\n'
        assert source.stat("sessions/s.jsonl").size == len(first) + len(tail)

    def test_a_truncated_file_reads_empty_past_its_end(self, sessions: Path) -> None:
        """The caller detects a rewrite from the size; the source just never fails on it."""
        transcript = sessions / "s.jsonl"
        transcript.write_bytes(b"x" * 100)
        transcript.write_bytes(b"y" * 10)

        assert (
            JsonlSessionSource(sessions_dir=str(sessions)).read_bytes("sessions/s.jsonl", 50) == b""
        )


class TestPathRules:
    @pytest.mark.parametrize(
        "path",
        [
            "s.jsonl",
            "sessions/archive/old.jsonl",
            "sessions/../s.jsonl",
            "../sessions/s.jsonl",
            "/etc/passwd",
            "sessions/s.txt",
            "memory/s.jsonl",
        ],
    )
    def test_paths_outside_the_sessions_form_are_refused(self, sessions: Path, path: str) -> None:
        (sessions / "s.jsonl").write_text("{}\n")
        (sessions / "s.txt").write_text("{}\n")
        (sessions / "archive").mkdir()
        (sessions / "archive" / "old.jsonl").write_text("{}\n")

        with pytest.raises(FileRefused):
            JsonlSessionSource(sessions_dir=str(sessions)).read_bytes(path)

    def test_a_name_too_long_for_the_file_system_is_refused_saying_so(self, sessions: Path) -> None:
        source = JsonlSessionSource(sessions_dir=str(sessions))
        path = "sessions/" + "a" * 300 + ".jsonl"

        with pytest.raises(FileRefused) as refused:
            source.read_bytes(path)

        assert refused.value.reason == "a name in the path is longer than the file system allows"

    def test_a_missing_transcript_is_missing(self, sessions: Path) -> None:
        with pytest.raises(FileMissing):
            JsonlSessionSource(sessions_dir=str(sessions)).stat("sessions/none.jsonl")

    def test_the_watch_root_is_the_sessions_folder(self, sessions: Path) -> None:
        assert JsonlSessionSource(sessions_dir=str(sessions)).watch_roots() == [str(sessions)]
