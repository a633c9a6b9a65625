"""Names that are not valid UTF-8 on real disks: reported once, readably, never listed nor served.

Python hands such a name over with surrogate escapes (`caf\\udce9.md`), which no store, JSON
output or UTF-8 log can hold; the sources spell it `caf\\xe9.md` instead.
"""

from __future__ import annotations

import codecs
import os
from pathlib import Path

import pytest

from memlane.adapters.sources.filesystem import FilesystemMemorySource
from memlane.adapters.sources.jsonl_sessions import JsonlSessionSource
from memlane.adapters.sources.note_writer import FilesystemNoteWriter
from memlane.application.ports.file_source import FileRefused
from memlane.domain.sources import SourceIssue, readable_path

pytestmark = pytest.mark.integration


def _make(folder: Path, name: bytes, content: bytes = b"# x\nwalrus\n") -> str:
    """Create the file `name` (raw bytes) in `folder`; return its name as Python reads it."""
    with open(os.path.join(os.fsencode(folder), name), "wb") as handle:
        handle.write(content)
    return os.fsdecode(name)


def _storable(issues: list[SourceIssue]) -> None:
    for issue in issues:
        issue.path.encode("utf-8")  # what SQLite, JSON and the logs do with it


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws" / "memory").mkdir(parents=True)
    (tmp_path / "ws" / "MEMORY.md").write_text("# a\nwalrus note\n")
    return tmp_path / "ws"


class TestMemoryNotes:
    def test_a_file_name_is_reported_once_in_a_readable_spelling(self, ws: Path) -> None:
        _make(ws / "memory", b"caf\xe9.md")

        result = FilesystemMemorySource(workspace=str(ws)).scan()

        assert [f.path for f in result.files] == ["MEMORY.md"]
        assert result.issues == [SourceIssue("memory/caf\\xe9.md", "file name is not valid UTF-8")]
        _storable(result.issues)

    def test_a_folder_name_is_reported_and_not_entered(self, ws: Path) -> None:
        folder = os.path.join(os.fsencode(ws / "memory"), b"dir\xff")
        os.mkdir(folder)
        _make(Path(os.fsdecode(folder)), b"inside.md")

        result = FilesystemMemorySource(workspace=str(ws)).scan()

        assert [f.path for f in result.files] == ["MEMORY.md"]
        assert result.issues == [SourceIssue("memory/dir\\xff", "folder name is not valid UTF-8")]

    def test_a_symlinked_folder_is_said_to_be_a_folder(self, ws: Path) -> None:
        (ws / "notes").mkdir()
        os.symlink(ws / "notes", os.path.join(os.fsencode(ws / "memory"), b"link\xff"))

        result = FilesystemMemorySource(workspace=str(ws)).scan()

        assert result.issues == [SourceIssue("memory/link\\xff", "folder name is not valid UTF-8")]

    def test_any_other_problem_of_such_a_name_is_readable_too(
        self, ws: Path, tmp_path: Path
    ) -> None:
        outside = tmp_path / "outside.md"
        outside.write_text("secret\n")
        os.symlink(outside, os.path.join(os.fsencode(ws / "memory"), b"esc\xe9.md"))

        result = FilesystemMemorySource(workspace=str(ws)).scan()

        assert [i.path for i in result.issues] == ["memory/esc\\xe9.md"]
        assert "outside the workspace" in result.issues[0].reason

    def test_an_extra_path_that_is_not_text_is_reported_and_not_walked(self, ws: Path) -> None:
        extra = os.fsdecode(os.path.join(os.fsencode(ws), b"extra\xe9"))
        os.mkdir(extra)
        _make(Path(extra), b"note.md")

        result = FilesystemMemorySource(workspace=str(ws), extra_paths=[extra]).scan()

        assert [f.path for f in result.files] == ["MEMORY.md"]
        assert result.issues == [SourceIssue("extra\\xe9", "extra path is not valid UTF-8")]

    def test_such_a_path_is_refused_on_read_in_a_readable_error(self, ws: Path) -> None:
        name = _make(ws / "memory", b"caf\xe9.md")
        source = FilesystemMemorySource(workspace=str(ws))

        with pytest.raises(FileRefused) as refused:
            source.read_bytes(f"memory/{name}")

        assert refused.value.path == "memory/caf\\xe9.md"
        str(refused.value).encode("utf-8")


class TestTranscripts:
    def test_a_transcript_name_is_reported_in_a_readable_spelling(self, tmp_path: Path) -> None:
        sessions = tmp_path / "sessions"
        sessions.mkdir()
        _make(sessions, b"s\xe9.jsonl", b"{}\n")
        _make(sessions, b"good.jsonl", b"{}\n")

        result = JsonlSessionSource(sessions_dir=str(sessions)).scan()

        assert [f.path for f in result.files] == ["sessions/good.jsonl"]
        assert result.issues == [
            SourceIssue("sessions/s\\xe9.jsonl", "file name is not valid UTF-8")
        ]

    def test_such_a_transcript_is_refused_on_read(self, tmp_path: Path) -> None:
        name = _make(tmp_path, b"s\xe9.jsonl", b"{}\n")

        with pytest.raises(FileRefused, match=r"sessions/s\\xe9\.jsonl"):
            JsonlSessionSource(sessions_dir=str(tmp_path)).read_bytes(f"sessions/{name}")


def test_a_note_is_never_written_under_such_a_name(ws: Path) -> None:
    writer = FilesystemNoteWriter(workspace=str(ws))

    with pytest.raises(FileRefused, match="not valid UTF-8"):
        writer.write("memory/caf\udce9.md", b"walrus\n", append=False, max_bytes=1000)

    assert os.listdir(os.fsencode(ws / "memory")) == []


@pytest.mark.parametrize(
    "raw",
    [b"caf\xe9.md", b"a\\xff\xff.md", b"tab\t\xfe.md", b"\xc3\xa9t\xe9.md", b"\xff"],
    ids=[
        "latin-1",
        "a literal backslash-x",
        "a control character",
        "valid UTF-8 beside",
        "one byte",
    ],
)
def test_the_spelling_gives_the_bytes_back(raw: bytes) -> None:
    spelled = readable_path(os.fsdecode(raw))

    assert spelled.isprintable()
    assert codecs.escape_decode(spelled.encode("utf-8"))[0] == raw


def test_a_valid_name_is_left_as_it_is() -> None:
    assert readable_path("memory/été\\x.md") == "memory/été\\x.md"
