"""A hit's snippet with its citation: the blank edges go, the first line's indentation stays."""

from __future__ import annotations

import pytest

from memlane.application.search_output import search_result
from memlane.domain.chunks import ChunkId
from memlane.domain.scoring import Fused


def _hit(text: str) -> Fused:
    return Fused(
        chunk_id=ChunkId("c1"),
        source="memory",
        path="memory/deploy.md",
        start_line=4,
        end_line=6,
        text=text,
        vector_score=None,
        text_score=1.0,
        score=1.0,
    )


class TestSnippetWithCitation:
    def test_the_first_lines_indentation_is_kept(self) -> None:
        code = "    def deploy():\n        run('make release')\n"

        result = search_result(_hit(code), 1, citations=True, explain=False)

        assert result.snippet == (
            "    def deploy():\n        run('make release')\n\nSource: memory/deploy.md#L4-L6"
        )

    @pytest.mark.parametrize("text", ["\n\n  \n\titem one\n", "\titem one \n\n  "])
    def test_leading_blank_lines_and_trailing_whitespace_go(self, text: str) -> None:
        result = search_result(_hit(text), 1, citations=True, explain=False)

        assert result.snippet == "\titem one\n\nSource: memory/deploy.md#L4-L6"

    def test_without_citations_the_snippet_is_the_text(self) -> None:
        result = search_result(_hit("    indented\n"), 1, citations=False, explain=False)

        assert (result.snippet, result.citation) == ("    indented\n", None)
