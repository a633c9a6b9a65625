"""Unit tests: the heading trail a note's chunk is indexed with (domain/heading_trail.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memlane.domain.chunking import chunk_text
from memlane.domain.chunks import ChunkingPolicy
from memlane.domain.hashing import sha256_text
from memlane.domain.heading_trail import (
    HEADING_CHARS,
    TRAIL_CHARS,
    TrailReader,
    indexed_text,
)
from memlane.domain.markdown_blocks import atx_level as heading_level
from memlane.domain.markdown_blocks import heading_levels

SMALL = ChunkingPolicy(tokens=12, overlap=0)  # 48 units: two 20-character lines per chunk
LINE = "x" * 20


def trail_of(lines: list[str], start: int) -> str:
    return TrailReader(lines, [heading_level(line) for line in lines]).above(start)


class TestHeadingLevel:
    def test_atx_headings_and_their_levels(self) -> None:
        assert [heading_level(h) for h in ("# a", "## b", "###### f", "#", "   ## c")] == [
            1,
            2,
            6,
            1,
            2,
        ]

    def test_lines_that_are_not_headings(self) -> None:
        for line in ("#hashtag", "####### seven", "    # code", "text # not", "", "#\u00a0x"):
            assert heading_level(line) == 0, line


class TestTrailReader:
    def test_no_heading_above_gives_no_trail(self) -> None:
        assert trail_of(["a", "b", "# later"], 1) == ""

    def test_nearest_heading_of_each_level_outermost_first(self) -> None:
        lines = ["# Project", "## Old", "x", "## Decisions", "### Retry", "y", "z"]
        assert trail_of(lines, 5) == "# Project\n## Decisions\n### Retry"

    def test_a_heading_closes_every_deeper_level(self) -> None:
        lines = ["# A", "## B", "### C", "x", "## D", "y"]
        assert trail_of(lines, 5) == "# A\n## D"

    def test_a_chunk_opening_with_a_heading_keeps_only_the_levels_above_it(self) -> None:
        lines = ["# A", "## B", "x", "## C", "y"]
        assert trail_of(lines, 3) == "# A"

    def test_a_fenced_hash_line_is_not_a_heading(self) -> None:
        lines = ["# Notes", "```", "# comment", "```", "x"]
        levels = [1, 0, 0, 0, 0]  # as the chunker reads them: the fenced line is no heading
        assert TrailReader(lines, levels).above(4) == "# Notes"

    def test_a_setext_heading_is_named_by_its_text(self) -> None:
        lines = ["Project", "=======", "x", "", "Decisions", "---------", "y"]
        assert TrailReader(lines, heading_levels(lines)).above(6) == "Project\nDecisions"

    def test_reading_in_order_gives_each_chunk_its_own_trail(self) -> None:
        lines = ["# A", "x", "## B", "y", "# C", "z"]
        reader = TrailReader(lines, [heading_level(line) for line in lines])
        assert [reader.above(s) for s in (0, 1, 1, 3, 5)] == ["", "# A", "# A", "# A\n## B", "# C"]

    def test_long_headings_are_cut_and_the_outermost_dropped_first(self) -> None:
        lines = ["# " + "a" * 400, "## " + "b" * 200, "### c", "x"]
        trail = trail_of(lines, 3)
        assert trail.split("\n") == ["## " + "b" * (HEADING_CHARS - 3), "### c"]
        assert len(trail) <= TRAIL_CHARS


class TestChunksOfNotes:
    def test_each_chunk_after_the_heading_carries_it_and_hashes_it(self) -> None:
        text = "\n".join(["# Paper title", LINE, LINE, LINE, LINE, LINE])
        chunks = chunk_text("memory", "n.md", text, SMALL, heading_context=True)
        assert len(chunks) >= 3
        assert chunks[0].text.startswith("# Paper title") and chunks[0].context == ""
        assert chunks[0].hash == sha256_text(chunks[0].text)
        for chunk in chunks[1:]:
            assert chunk.context == "# Paper title"
            assert chunk.indexed_text == "# Paper title\n" + chunk.text
            assert chunk.hash == sha256_text(chunk.indexed_text)

    def test_text_and_lines_are_unchanged_by_the_trail(self) -> None:
        text = "\n".join(["# T", LINE, "## S", LINE, LINE, LINE])
        plain = chunk_text("memory", "n.md", text, SMALL)
        headed = chunk_text("memory", "n.md", text, SMALL, heading_context=True)
        assert [(c.start_line, c.end_line, c.text) for c in plain] == [
            (c.start_line, c.end_line, c.text) for c in headed
        ]
        assert all(c.context == "" for c in plain)
        assert any(c.context for c in headed)

    def test_renaming_a_heading_changes_the_hash_of_the_chunks_under_it(self) -> None:
        before = chunk_text(
            "memory", "n.md", f"# Old\n{LINE}\n{LINE}\n{LINE}", SMALL, heading_context=True
        )
        after = chunk_text(
            "memory", "n.md", f"# New\n{LINE}\n{LINE}\n{LINE}", SMALL, heading_context=True
        )
        assert before[-1].text == after[-1].text
        assert before[-1].hash != after[-1].hash
        assert before[-1].id != after[-1].id

    def test_a_fenced_hash_line_never_enters_a_chunks_trail(self) -> None:
        text = "\n".join(["# Notes", "```", "# a shell comment", "```", LINE, LINE, LINE])
        chunks = chunk_text("memory", "n.md", text, SMALL, heading_context=True)
        assert chunks[-1].context == "# Notes"

    def test_without_the_flag_chunks_are_as_before(self) -> None:
        text = "\n".join(["# T", LINE, LINE, LINE])
        for chunk in chunk_text("sessions", "s.jsonl", text, SMALL):
            assert chunk.context == ""
            assert chunk.hash == sha256_text(chunk.text)

    @settings(max_examples=200, deadline=None)
    @given(
        st.lists(
            st.sampled_from(
                ["# A", "## B", "### C", "text line here", "", "```", "~~~", "# x y z", "---", "="]
            ),
            min_size=1,
            max_size=40,
        )
    )
    def test_every_trail_is_made_of_heading_lines_above_the_chunk(self, lines: list[str]) -> None:
        text = "\n".join(lines)
        levels = heading_levels(lines)
        for chunk in chunk_text("memory", "n.md", text, SMALL, heading_context=True):
            assert chunk.hash == sha256_text(indexed_text(chunk.context, chunk.text))
            above = [
                line.strip()
                for line, level in zip(lines[: chunk.start_line - 1], levels, strict=False)
                if level
            ]
            for heading in filter(None, chunk.context.split("\n")):
                assert heading in above
