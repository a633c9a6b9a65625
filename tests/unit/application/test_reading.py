"""read_lines and read_messages: line ranges of memory files, transcript messages, refusals."""

from __future__ import annotations

import pytest

from memlane.application.ports.file_source import FileRefused, FileSource
from memlane.application.reading import (
    MAX_LINES,
    normalise_path,
    read_lines,
    read_messages,
    source_of,
)
from memlane.domain.chunking import chunk_text
from memlane.domain.chunks import ChunkingPolicy
from memlane.domain.errors import InvalidQuery
from memlane.domain.sources import Source
from memlane.domain.text_decoding import decode_text
from tests.fakes.file_source import FakeFileSource
from tests.unit.application.conftest import message


def sources(**more: str) -> dict[Source, FileSource]:
    """The fixed files below, and `more` (file name under memory/ or sessions/ -> text)."""
    memory = FakeFileSource(source_name="memory")
    memory.write("MEMORY.md", "one\r\ntwo\r\nthree\r\nfour\r\n")
    memory.write("blob.md", b"\x00\x01\x02\x00")
    sessions = FakeFileSource(source_name="sessions")
    sessions.write(
        "sessions/a.jsonl",
        message("user", "my token is sk-123")
        + '{"type": "tool"}\n'
        + message("assistant", "stored")
        + message("user", "thanks"),
    )
    for name, text in more.items():
        if name.endswith(".jsonl"):
            sessions.write(f"sessions/{name}", text)
        else:
            memory.write(f"memory/{name}", text)
    return {"memory": memory, "sessions": sessions}


class TestMemoryFiles:
    def test_the_whole_file_by_default_with_crlf_folded(self) -> None:
        got = read_lines(sources(), "MEMORY.md")

        assert got.text == "one\ntwo\nthree\nfour\n"
        assert (got.from_line, got.lines, got.source) == (1, MAX_LINES, "memory")

    def test_a_range_of_lines(self) -> None:
        got = read_lines(sources(), "  MEMORY.md  ", from_line=2, lines=2)

        assert (got.path, got.text) == ("MEMORY.md", "two\nthree")

    def test_past_the_end_is_empty(self) -> None:
        assert read_lines(sources(), "MEMORY.md", from_line=50).text == ""

    def test_the_line_count_is_capped(self) -> None:
        assert read_lines(sources(), "MEMORY.md", lines=MAX_LINES * 10).lines == MAX_LINES

    def test_a_read_stopped_by_the_cap_says_where_the_file_goes_on(self) -> None:
        src = sources(**{"big.md": "".join(f"line {n}\n" for n in range(1, 12_001))})

        whole = read_lines(src, "memory/big.md")
        asked_more = read_lines(src, "memory/big.md", from_line=5, lines=MAX_LINES * 2)

        assert whole.text.split("\n")[-1] == f"line {MAX_LINES}"
        assert whole.more_from == MAX_LINES + 1
        assert asked_more.more_from == MAX_LINES + 5
        assert read_lines(src, "memory/big.md", from_line=MAX_LINES + 1).more_from is None

    def test_a_window_asked_for_or_a_file_ending_at_the_cap_is_not_cut_short(self) -> None:
        src = sources(
            **{"exact.md": "x\n" * MAX_LINES, "big.md": "x\n" * (MAX_LINES + 5)}
        )  # exact.md ends at the cap

        assert read_lines(src, "memory/exact.md").more_from is None
        assert read_lines(src, "memory/big.md", lines=20).more_from is None
        assert read_lines(sources(), "MEMORY.md").more_from is None

    @pytest.mark.parametrize(
        "raw",
        [
            b"# Old Mac\r\rcr one\rcr two\rcr three\r",  # lone CR line ends
            b"# Mixed\r\n\rcrlf one\ncr two\rlf three",
            b"\xef\xbb\xbf# BOM\n\nform\x0cfeed one\nline\xe2\x80\xa8sep two\nnel\xc2\x85three\n",
        ],
    )
    def test_a_hit_s_line_range_reads_the_lines_that_hold_its_text(self, raw: bytes) -> None:
        # Search cites the chunker's line numbers; `get` of that range must show the same text.
        decoded = decode_text(raw).text
        chunks = chunk_text("memory", "memory/n.md", decoded, ChunkingPolicy(tokens=8, overlap=0))
        memory = FakeFileSource(source_name="memory")
        memory.write("memory/n.md", raw)
        src: dict[Source, FileSource] = {"memory": memory}

        assert len(chunks) > 1
        for chunk in chunks:
            count = chunk.end_line - chunk.start_line + 1
            got = read_lines(src, "memory/n.md", from_line=chunk.start_line, lines=count)
            assert got.text == chunk.text

    def test_a_binary_file_is_refused(self) -> None:
        with pytest.raises(FileRefused):
            read_lines(sources(), "blob.md")

    def test_a_missing_file_reads_as_empty_text(self) -> None:
        got = read_lines(sources(), "memory/2026-01-02.md")

        assert (got.path, got.text, got.source) == ("memory/2026-01-02.md", "", "memory")
        assert got.missing  # said, not mistaken for an empty note
        assert not read_lines(sources(), "MEMORY.md").missing

    @pytest.mark.parametrize(
        "probe",
        [
            "memory/../../secret.md",
            "/etc/passwd",
            "memory\\..\\..\\s.md",
        ],
    )
    def test_escapes_are_refused_not_read_as_missing(self, probe: str) -> None:
        with pytest.raises(FileRefused):
            read_lines(sources(), probe, workspace="/home/u/ws")

    @pytest.mark.parametrize("start", [0, None])
    def test_from_zero_or_unset_is_the_whole_file(self, start: int | None) -> None:
        assert read_lines(sources(), "MEMORY.md", from_line=start).text == (
            "one\ntwo\nthree\nfour\n"
        )

    def test_a_negative_from_is_clamped_to_the_first_line(self) -> None:
        got = read_lines(sources(), "MEMORY.md", from_line=-5, lines=2)

        assert (got.from_line, got.text) == (1, "one\ntwo")

    @pytest.mark.parametrize(
        "spelling",
        ["./MEMORY.md", "././MEMORY.md", "/home/u/ws/MEMORY.md", "/home/u/ws/./MEMORY.md"],
    )
    def test_the_reference_spellings_of_a_path_read_the_same_file(self, spelling: str) -> None:
        got = read_lines(sources(), spelling, workspace="/home/u/ws")

        assert (got.path, got.text) == ("MEMORY.md", "one\ntwo\nthree\nfour\n")

    def test_a_backslash_path_is_the_same_file(self) -> None:
        memory = FakeFileSource(source_name="memory")
        memory.write("memory/x.md", "note")

        assert read_lines({"memory": memory}, "memory\\x.md").text == "note"

    @pytest.mark.parametrize(
        ("path", "indexed"),
        [
            ("/home/u/other/MEMORY.md", "../other/MEMORY.md"),
            ("/home/u/ws/../ws2/MEMORY.md", "../ws2/MEMORY.md"),
            ("/home/u/wsx/MEMORY.md", "../wsx/MEMORY.md"),
        ],
    )
    def test_absolute_paths_outside_the_workspace_take_the_extra_paths_spelling(
        self, path: str, indexed: str
    ) -> None:
        """As an extra path's file is indexed; the source refuses it unless it lies in one."""
        assert normalise_path(path, "/home/u/ws") == indexed


class TestTranscripts:
    def test_messages_in_the_jsonl_line_range_are_flattened_and_redacted(self) -> None:
        got = read_lines(
            sources(),
            "sessions/a.jsonl",
            from_line=1,
            lines=3,
            redact=lambda t: t.replace("sk-123", "[REDACTED]"),
        )

        # Line 2 is not a message; line 4 is outside the range.
        assert got.text == "User: my token is [REDACTED]\nAssistant: stored"
        assert got.source == "sessions"

    def test_a_transcript_read_stopped_by_the_cap_says_where_it_goes_on(self) -> None:
        src = sources(
            **{"long.jsonl": "".join(message("user", f"m{n}") for n in range(MAX_LINES + 3))}
        )

        got = read_lines(src, "sessions/long.jsonl")

        assert got.more_from == MAX_LINES + 1
        assert got.text.split("\n")[-1] == f"User: m{MAX_LINES - 1}"
        assert read_lines(src, "sessions/long.jsonl", lines=5).more_from is None
        assert read_lines(sources(), "sessions/a.jsonl").more_from is None

    def test_a_disabled_sessions_source_is_refused(self) -> None:
        only_memory: dict[Source, FileSource] = {"memory": sources()["memory"]}

        with pytest.raises(FileRefused, match="the sessions source is not enabled"):
            read_lines(only_memory, "sessions/a.jsonl")


class TestTranscriptMessages:
    def test_each_message_keeps_its_role_jsonl_line_and_time_redacted(self) -> None:
        path, messages = read_messages(
            sources(), "./sessions/a.jsonl", redact=lambda t: t.replace("sk-123", "***")
        )

        assert path == "sessions/a.jsonl"
        assert [(m.line, m.role, m.text) for m in messages] == [
            (1, "user", "my token is ***"),
            (3, "assistant", "stored"),
            (4, "user", "thanks"),
        ]
        assert messages[0].timestamp == 1_795_165_200.0  # 2026-11-20T09:00:00Z

    def test_a_missing_transcript_has_no_messages(self) -> None:
        assert read_messages(sources(), "sessions/none.jsonl") == ("sessions/none.jsonl", ())

    def test_a_note_is_refused(self) -> None:
        with pytest.raises(FileRefused, match="not a transcript"):
            read_messages(sources(), "MEMORY.md")

    @pytest.mark.parametrize("probe", ["sessions/../../etc/passwd", "/etc/passwd", ""])
    def test_escapes_and_blanks_are_refused_as_read_lines_refuses_them(self, probe: str) -> None:
        with pytest.raises((FileRefused, InvalidQuery)) as refused:
            read_messages(sources(), probe, workspace="/home/u/ws")
        with pytest.raises(type(refused.value)):
            read_lines(sources(), probe, workspace="/home/u/ws")


class TestArguments:
    def test_a_blank_path_is_an_invalid_query(self) -> None:
        with pytest.raises(InvalidQuery, match="path required"):
            read_lines(sources(), "   ")

    @pytest.mark.parametrize(
        ("kwargs", "name"),
        [
            ({"from_line": 1.5}, "from"),
            ({"from_line": True}, "from"),
            ({"lines": -1}, "lines"),
            ({"lines": 1.5}, "lines"),
        ],
    )
    def test_numbers_must_be_whole_and_positive(self, kwargs: dict[str, object], name: str) -> None:
        with pytest.raises(InvalidQuery, match=f"{name} must be a whole number"):
            read_lines(sources(), "MEMORY.md", **kwargs)  # type: ignore[arg-type]

    def test_the_source_is_told_by_the_path(self) -> None:
        assert source_of("sessions/a.jsonl") == "sessions"
        assert source_of("memory/sessions/a.md") == "memory"
        assert source_of("MEMORY.md") == "memory"
