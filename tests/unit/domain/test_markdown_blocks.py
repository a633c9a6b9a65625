"""Unit tests: which lines of a note are headings (domain/markdown_blocks.py)."""

from __future__ import annotations

import pytest

from memlane.domain.markdown_blocks import heading_levels


def levels(text: str) -> list[int]:
    return heading_levels(text.split("\n"))


class TestAtxHeadings:
    def test_levels_one_to_six(self) -> None:
        assert levels("# a\n## b\n###### f\nx") == [1, 2, 6, 0]

    def test_a_hash_without_a_space_is_text(self) -> None:
        assert levels("#hashtag\n####### seven\n    # code") == [0, 0, 0]


class TestSetextHeadings:
    def test_equals_underline_is_level_one_dashes_level_two(self) -> None:
        assert levels("Title\n=====\ntext\n\nSection\n---\nmore") == [1, 0, 0, 0, 2, 0, 0]

    def test_the_underline_may_be_short_indented_and_trailed_by_spaces(self) -> None:
        assert levels("A long title\n   =  \nx") == [1, 0, 0]

    def test_a_paragraph_of_several_lines_is_one_heading_at_its_first_line(self) -> None:
        assert levels("first line\nsecond line\n---") == [2, 0, 0]

    def test_dashes_after_a_blank_line_are_a_thematic_break(self) -> None:
        assert levels("text\n\n---\nmore\n") == [0, 0, 0, 0, 0]

    def test_dashes_under_a_list_item_or_quote_are_a_break(self) -> None:
        assert levels("- item\n---") == [0, 0]
        assert levels("1. item\nlazy line\n---") == [0, 0, 0]
        assert levels("> quoted\n---") == [0, 0]

    def test_a_thematic_break_ends_a_paragraph_and_a_new_one_can_be_underlined(self) -> None:
        assert levels("***\nTitle\n===") == [0, 1, 0]

    def test_an_indented_code_line_is_not_underlined(self) -> None:
        assert levels("\n    code\n---") == [0, 0, 0]

    def test_a_table_delimiter_row_is_not_an_underline(self) -> None:
        assert levels("| a | b |\n|---|---|\n| 1 | 2 |") == [0, 0, 0]
        assert levels("a | b\n--- | ---") == [0, 0]

    def test_an_atx_heading_is_not_underlined_again(self) -> None:
        assert levels("## Title\n---") == [2, 0]


class TestFences:
    @pytest.mark.parametrize("fence", ["```", "~~~", "````", "```python"])
    def test_nothing_inside_a_fence_is_a_heading(self, fence: str) -> None:
        closing = fence.rstrip("python")
        assert levels(f"{fence}\n# comment\ntext\n---\n{closing}\n# Real") == [0] * 5 + [1]

    def test_a_tilde_fence_inside_a_backtick_fence_is_code(self) -> None:
        text = "```\n~~~\n# still code\n```\n# Heading"
        assert levels(text) == [0, 0, 0, 0, 1]

    def test_a_shorter_fence_does_not_close_a_longer_one(self) -> None:
        text = "````\n```\n# still code\n````\n# Heading"
        assert levels(text) == [0, 0, 0, 0, 1]

    def test_a_fence_with_text_after_it_does_not_close(self) -> None:
        assert levels("```\n``` not a close\n# code\n```\n# H") == [0, 0, 0, 0, 1]

    def test_an_unclosed_fence_runs_to_the_end(self) -> None:
        assert levels("# A\n```\n# b\n## c") == [1, 0, 0, 0]

    def test_a_backtick_fence_whose_info_holds_a_backtick_is_text(self) -> None:
        assert levels("``` a`b\n# Heading") == [0, 1]


class TestFrontMatter:
    def test_front_matter_holds_no_heading(self) -> None:
        assert levels("---\ntitle: x\n---\n# Body") == [0, 0, 0, 1]

    def test_front_matter_may_close_with_dots(self) -> None:
        assert levels("---\ntitle: x\n...\nBody\n===") == [0, 0, 0, 1, 0]

    def test_an_unclosed_opening_rule_is_a_thematic_break(self) -> None:
        assert levels("---\nTitle\n===") == [0, 1, 0]
