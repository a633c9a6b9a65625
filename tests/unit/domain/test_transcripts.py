"""Unit tests: JSONL transcript parsing, rendering and message counting."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from memlane.domain.transcripts import (
    Transcript,
    TranscriptMessage,
    count_messages,
    count_new_messages,
    parse_timestamp,
    parse_transcript,
    render_transcript,
)

T = datetime(2026, 1, 5, 10, 30, tzinfo=UTC).timestamp()


def jsonl(*records: object) -> bytes:
    return b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in records)


def wrapped(role: str, content: object, **extra: object) -> dict[str, object]:
    return {"type": "message", "message": {"role": role, "content": content}, **extra}


class TestRecordShapes:
    def test_wrapped_message_with_string_content(self) -> None:
        parsed = parse_transcript(jsonl(wrapped("user", "hello there")))
        assert parsed.messages == (TranscriptMessage(1, "user", "hello there", None),)

    def test_text_blocks_are_joined_with_a_space_and_other_blocks_ignored(self) -> None:
        content = [
            {"type": "text", "text": "first"},
            {"type": "image", "data": "..."},
            {"type": "toolCall", "name": "x"},
            {"type": "text", "text": "  "},
            {"type": "text", "text": "second\n\npart"},
            "not a block",
        ]
        [message] = parse_transcript(jsonl(wrapped("assistant", content))).messages
        assert (message.role, message.text) == ("assistant", "first second part")

    def test_whitespace_runs_and_newlines_collapse_to_one_space(self) -> None:
        [message] = parse_transcript(jsonl(wrapped("user", "  a \n\n b\t\tc  "))).messages
        assert message.text == "a b c"

    def test_flat_role_and_content_records_are_accepted(self) -> None:
        data = jsonl(
            {"role": "user", "content": "flat"},
            {"type": "message", "role": "assistant", "content": "typed flat"},
        )
        assert [m.text for m in parse_transcript(data).messages] == ["flat", "typed flat"]

    def test_records_of_other_types_are_ignored_silently(self) -> None:
        data = jsonl(
            {"type": "session", "id": "abc", "cwd": "/home/me"},
            {"type": "toolResult", "message": {"role": "toolResult", "content": "42"}},
            {"type": "compaction", "summary": "earlier turns"},
            wrapped("user", "kept"),
        )
        parsed = parse_transcript(data)
        assert [m.text for m in parsed.messages] == ["kept"]
        assert (parsed.skipped_lines, parsed.unread) == (0, "")

    def test_claude_code_records_are_read(self) -> None:
        data = jsonl(
            {"type": "user", "message": {"role": "user", "content": "vpn-stg is the host"}},
            {"type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "text", "text": "noted"}, {"type": "tool_use", "name": "x"}]}},
            {"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "content": "ok"}]}},  # a tool's answer: no text
        )  # fmt: skip
        parsed = parse_transcript(data)
        assert [(m.role, m.text) for m in parsed.messages] == [
            ("user", "vpn-stg is the host"),
            ("assistant", "noted"),
        ]
        assert parsed.unread == ""

    def test_flat_records_typed_user_or_assistant_are_read(self) -> None:
        data = jsonl({"type": "user", "role": "user", "content": "flat typed"})

        parsed = parse_transcript(data)

        assert [m.text for m in parsed.messages] == ["flat typed"] and parsed.unread == ""

    def test_an_unread_record_s_type_is_named_short_never_copied_whole(self) -> None:
        data = jsonl(
            {"message": {"role": "user", "content": "no type"}},
            {"type": "x" * 300, "message": {"role": "user", "content": "long type"}},
            {"type": {"nested": "secret"}, "role": "assistant", "content": "odd type"},
        )

        unread = parse_transcript(data).unread

        assert unread == (
            '3 message(s) in a record shape not read ("type": none from line 1, '
            '"type": <a long string> from line 2, "type": <a dict> from line 3)'
        )

    def test_a_message_in_a_shape_not_read_is_said_with_its_type(self) -> None:
        data = jsonl(
            {"type": "custom", "message": {"role": "user", "content": "not read"}},
            {"type": "turn", "role": "assistant", "content": "nor this"},
            {"type": "custom", "message": {"role": "assistant", "content": "again"}},
            wrapped("user", "kept"),
        )
        parsed = parse_transcript(data)
        assert [m.text for m in parsed.messages] == ["kept"]
        assert parsed.unread == (
            '3 message(s) in a record shape not read ("type": "custom" from line 1, '
            '"type": "turn" from line 2)'
        )
        assert parsed.skipped_lines == 0

    def test_content_of_other_kinds_and_empty_text_are_ignored(self) -> None:
        data = jsonl(
            wrapped("user", 42), wrapped("user", None), wrapped("user", "   "), wrapped("user", [])
        )
        assert parse_transcript(data).messages == ()

    def test_cjk_text_is_kept_intact(self) -> None:
        [message] = parse_transcript(jsonl(wrapped("user", "我们讨论了 API 调用方案"))).messages
        assert message.text == "我们讨论了 API 调用方案"


class TestRoleFiltering:
    def test_only_user_and_assistant_roles_are_kept(self) -> None:
        data = jsonl(
            wrapped("system", "sys"),
            wrapped("toolResult", "tool output"),
            wrapped("user", "u"),
            wrapped("assistant", "a"),
            wrapped("User", "case differs"),
            {"type": "message", "message": {"content": "no role"}},
        )
        parsed = parse_transcript(data)
        assert [(m.line, m.role) for m in parsed.messages] == [(3, "user"), (4, "assistant")]


class TestBrokenLines:
    def test_blank_lines_are_skipped_silently_but_keep_numbering(self) -> None:
        data = b"\n   \n" + jsonl(wrapped("user", "third line"))
        parsed = parse_transcript(data)
        assert [m.line for m in parsed.messages] == [3]
        assert (parsed.skipped_lines, parsed.problems) == (0, ())

    def test_each_kind_of_broken_line_is_counted_with_a_reason(self) -> None:
        good = jsonl(wrapped("user", "ok")).rstrip(b"\n")
        lines = [
            b'{"type": "message", "message": {"role": "user", "content": "secret"',  # malformed
            b"\xff\xfe not utf-8",
            b"[1, 2, 3]",
            b'"just a string"',
            good,
            b'{"type": "message", "message": {"role": "user", "content": "' + b"x" * 200 + b'"}}',
            b"[" * 100_000,
        ]
        data = b"\n".join(lines) + b"\n"
        parsed = parse_transcript(data, max_line_bytes=150)
        assert [m.line for m in parsed.messages] == [5]
        assert parsed.skipped_lines == 6
        assert parsed.problems == (
            "line 1: malformed JSON",
            "line 2: malformed JSON",  # its bad bytes read as U+FFFD, then the JSON fails
            "line 3: not a JSON object",
            "line 4: not a JSON object",
            "line 6: longer than 150 bytes",
            "line 7: longer than 150 bytes",
        )

    def test_a_message_with_an_invalid_utf8_byte_is_kept_with_it_replaced(self) -> None:
        """The reference reads transcripts as UTF-8 with replacement, as notes are read here:
        one bad byte used to drop the whole user message."""
        data = (
            b'{"type":"message","message":{"role":"user","content":"caf\xe9 order for emu"}}\n'
            + jsonl(wrapped("assistant", "noted"))
        )

        parsed = parse_transcript(data)

        assert [m.text for m in parsed.messages] == ["caf\ufffd order for emu", "noted"]
        assert (parsed.skipped_lines, parsed.replaced_bytes) == (0, 1)

    def test_deeply_nested_json_is_skipped_not_raised(self) -> None:
        data = b"[" * 100_000 + b"\n" + jsonl(wrapped("user", "after"))
        parsed = parse_transcript(data)
        assert [m.text for m in parsed.messages] == ["after"]
        assert parsed.skipped_lines == 1

    def test_problems_never_quote_line_content(self) -> None:
        parsed = parse_transcript(b'{"password": "hunter2"\n')
        assert parsed.skipped_lines == 1
        assert "hunter2" not in " ".join(parsed.problems)

    def test_a_truncated_last_line_is_reported_as_such(self) -> None:
        data = jsonl(wrapped("user", "one")) + b'{"type": "message", "mess'
        parsed = parse_transcript(data)
        assert [m.text for m in parsed.messages] == ["one"]
        assert parsed.problems == ("line 2: truncated last line (malformed JSON)",)

    def test_a_complete_last_line_without_newline_is_accepted(self) -> None:
        data = jsonl(wrapped("user", "one")).rstrip(b"\n")
        assert [m.text for m in parse_transcript(data).messages] == ["one"]

    def test_crlf_line_endings_and_a_byte_order_mark_are_tolerated(self) -> None:
        data = b"\xef\xbb\xbf" + jsonl(wrapped("user", "a")).replace(b"\n", b"\r\n") * 2
        parsed = parse_transcript(data)
        assert [m.line for m in parsed.messages] == [1, 2]
        assert parsed.skipped_lines == 0

    def test_empty_input_is_an_empty_transcript(self) -> None:
        assert parse_transcript(b"") == Transcript((), 0, ())

    def test_a_message_with_megabytes_of_attached_image_keeps_its_text(self) -> None:
        content = [
            {"type": "text", "text": "what is on this screenshot?"},
            {"type": "image", "mimeType": "image/png", "data": "A" * 5_000_000},
        ]
        parsed = parse_transcript(jsonl(wrapped("user", content)))
        assert [m.text for m in parsed.messages] == ["what is on this screenshot?"]
        assert parsed.skipped_lines == 0


class TestTimestamps:
    def test_iso_8601_record_timestamp(self) -> None:
        data = jsonl(wrapped("user", "x", timestamp="2026-01-05T10:30:00Z"))
        assert parse_transcript(data).messages[0].timestamp == T

    def test_epoch_milliseconds_inside_the_message(self) -> None:
        record = {
            "type": "message",
            "message": {"role": "user", "content": "x", "timestamp": T * 1000},
        }
        assert parse_transcript(jsonl(record)).messages[0].timestamp == T

    def test_invalid_record_timestamp_falls_back_to_the_message_timestamp(self) -> None:
        record = {
            "type": "message",
            "timestamp": "yesterday",
            "message": {"role": "user", "content": "x", "timestamp": int(T)},
        }
        assert parse_transcript(jsonl(record)).messages[0].timestamp == T

    def test_parse_timestamp_forms(self) -> None:
        assert parse_timestamp(T) == T
        assert parse_timestamp(int(T * 1000)) == T
        assert parse_timestamp("2026-01-05T11:30:00+01:00") == T
        assert parse_timestamp("2026-01-05T10:30:00") == T  # naive means UTC
        assert parse_timestamp(str(int(T))) == T

    def test_unusable_timestamps_are_none(self) -> None:
        values: list[object] = [None, True, "not a date", float("nan"), float("inf"), [], {}]
        for value in values:
            assert parse_timestamp(value) is None

    def test_epoch_microseconds_and_nanoseconds(self) -> None:
        assert parse_timestamp(int(T) * 1_000_000) == T
        assert parse_timestamp(int(T) * 1_000_000_000) == T
        assert parse_timestamp(str(int(T) * 1_000_000)) == T

    def test_times_no_date_can_show_are_none(self) -> None:
        values: list[object] = [
            1e300,
            -1e300,
            "1e300",
            "0001-01-01T00:00:00+05:00",  # before the year 1 in UTC
            "9999-12-31T23:59:59-05:00",  # after the year 9999 in UTC
        ]
        for value in values:
            assert parse_timestamp(value) is None

    def test_an_iso_date_is_never_rescaled_as_milliseconds(self) -> None:
        late = datetime(6000, 1, 1, tzinfo=UTC)
        assert parse_timestamp(late.isoformat()) == late.timestamp()


class TestRenderTranscript:
    def test_renders_role_labelled_lines_with_their_jsonl_lines_and_times(self) -> None:
        data = jsonl(
            wrapped("user", "question?", timestamp=T),
            wrapped("system", "hidden"),
            wrapped("assistant", "answer."),
        )
        rendered = render_transcript(parse_transcript(data))
        assert rendered.text == "User: question?\nAssistant: answer."
        assert rendered.line_numbers == (1, 3)
        assert rendered.timestamps == (T, None)

    def test_redact_is_applied_to_each_message_text(self) -> None:
        data = jsonl(wrapped("user", "my pin is 1234"), wrapped("assistant", "ok"))
        rendered = render_transcript(
            parse_transcript(data), redact=lambda s: s.replace("1234", "***")
        )
        assert rendered.text == "User: my pin is ***\nAssistant: ok"

    def test_a_redaction_adding_newlines_cannot_shift_lines(self) -> None:
        data = jsonl(wrapped("user", "a"), wrapped("assistant", "b"))
        rendered = render_transcript(parse_transcript(data), redact=lambda s: f"{s}\nmore")
        assert rendered.text.split("\n") == ["User: a more", "Assistant: b more"]

    def test_an_empty_transcript_renders_as_empty_text(self) -> None:
        rendered = render_transcript(parse_transcript(b""))
        assert (rendered.text, rendered.line_numbers, rendered.timestamps) == ("", (), ())


class TestCountMessages:
    def test_counts_accepted_messages_not_lines(self) -> None:
        data = (
            jsonl(wrapped("user", "a"), wrapped("toolResult", "t"), wrapped("assistant", "b"))
            + b"\n\n"
        )
        assert count_messages(data) == 2

    def test_a_partial_last_line_is_not_counted(self) -> None:
        data = jsonl(wrapped("user", "a")) + jsonl(wrapped("user", "b")).rstrip(b"\n")
        assert count_messages(data) == 1

    def test_no_complete_line_counts_zero(self) -> None:
        assert count_messages(jsonl(wrapped("user", "a")).rstrip(b"\n")) == 0
        assert count_messages(b"") == 0

    def test_a_range_starting_mid_line_skips_the_fragment(self) -> None:
        data = jsonl(wrapped("user", "a"), wrapped("assistant", "b"))
        assert count_messages(data[5:]) == 1


class TestCountNewMessages:
    def test_messages_after_a_line_boundary(self) -> None:
        before = jsonl(wrapped("user", "a"))
        data = before + jsonl(wrapped("user", "b"), wrapped("assistant", "c"))
        assert count_new_messages(data, len(before)) == 2

    def test_a_line_cut_at_the_indexed_size_counts_once_complete(self) -> None:
        data = jsonl(wrapped("user", "a"), wrapped("user", "b"), wrapped("assistant", "c"))
        cut = len(jsonl(wrapped("user", "a"))) + 10  # inside the second line
        assert count_new_messages(data, cut) == 2

    def test_a_complete_last_line_indexed_without_its_newline_is_not_new(self) -> None:
        line = jsonl(wrapped("user", "a"))
        assert count_new_messages(line, len(line) - 1) == 0
        assert count_new_messages(line + jsonl(wrapped("user", "b")), len(line) - 1) == 1

    def test_a_partial_last_line_is_not_counted_yet(self) -> None:
        before = jsonl(wrapped("user", "a"))
        data = before + jsonl(wrapped("user", "b"))[:-5]
        assert count_new_messages(data, len(before)) == 0
