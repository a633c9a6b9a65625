"""Unit tests: snippet truncation and citations."""

from __future__ import annotations

from memlane.domain.snippets import citation_for, make_snippet


class TestMakeSnippet:
    def test_short_text_is_returned_unchanged(self) -> None:
        assert make_snippet("hello\nworld") == "hello\nworld"

    def test_long_text_is_cut_to_the_limit_in_code_points(self) -> None:
        text = "中" * 1000
        assert make_snippet(text) == "中" * 700
        assert make_snippet(text, limit=10) == "中" * 10

    def test_emoji_count_as_one_code_point_and_are_never_split(self) -> None:
        snippet = make_snippet("😀" * 20, limit=7)
        assert snippet == "😀" * 7
        snippet.encode("utf-8")

    def test_never_ends_between_the_halves_of_a_raw_surrogate_pair(self) -> None:
        text = "ab" + "\ud83d\ude00" * 5
        assert make_snippet(text, limit=3) == "ab"
        assert make_snippet(text, limit=4) == "ab\ud83d\ude00"

    def test_lone_surrogate_from_surrogateescape_may_end_the_snippet(self) -> None:
        text = b"ab\xff\xfecd".decode("utf-8", "surrogateescape")
        assert make_snippet(text, limit=3) == "ab\udcff"

    def test_non_positive_limit_gives_empty_text(self) -> None:
        assert make_snippet("abc", limit=0) == ""
        assert make_snippet("abc", limit=-5) == ""


class TestCitationFor:
    def test_single_line(self) -> None:
        assert citation_for("memory/2026-01-05.md", 5, 5) == "memory/2026-01-05.md#L5"

    def test_line_range(self) -> None:
        assert citation_for("MEMORY.md", 5, 9) == "MEMORY.md#L5-L9"
