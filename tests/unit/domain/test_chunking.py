"""Unit tests: token estimate and line-based chunking under a token budget."""

from __future__ import annotations

import re
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlane.domain.chunking import chunk_text, estimate_tokens
from memlane.domain.chunks import Chunk, ChunkingPolicy
from memlane.domain.hashing import chunk_id, sha256_text

NINE = "aaaaaaaaa"  # 9 units: three of them joined by newlines fill 29 of a 32-unit budget


def spans(chunks: list[Chunk]) -> list[tuple[int, int]]:
    return [(c.start_line, c.end_line) for c in chunks]


def chinese_text(chars: int) -> str:
    sentence = "我们讨论了新的索引方案，并决定下周完成迁移。"
    lines: list[str] = []
    while sum(len(line) for line in lines) < chars:
        lines.append(sentence * (1 + len(lines) % 4))
    return "\n".join(lines)[:chars]


class TestEstimateTokens:
    def test_empty_text_is_zero_tokens(self) -> None:
        assert estimate_tokens("") == 0

    def test_latin_text_is_about_four_characters_per_token(self) -> None:
        assert estimate_tokens("abcd") == 1
        assert estimate_tokens("abcde") == 2
        assert estimate_tokens("x" * 400) == 100

    def test_each_cjk_character_is_one_token(self) -> None:
        assert estimate_tokens("中文") == 2
        assert estimate_tokens("ひらがなカタカナ") == 8
        assert estimate_tokens("한국어") == 3
        assert estimate_tokens("句子。") == 3

    def test_mixed_text_adds_both_costs(self) -> None:
        assert estimate_tokens("api调用") == 3  # 3 latin units + 2 CJK tokens, rounded up

    def test_an_emoji_counts_like_other_text(self) -> None:
        assert estimate_tokens("😀" * 8) == 2


class TestChunkTextBasics:
    def test_empty_text_gives_no_chunks(self) -> None:
        assert chunk_text("memory", "a.md", "", ChunkingPolicy()) == []

    def test_whitespace_only_text_gives_no_chunks(self) -> None:
        assert chunk_text("memory", "a.md", " \n\t\n\n  ", ChunkingPolicy()) == []

    def test_short_text_is_one_chunk_with_1_based_inclusive_lines(self) -> None:
        [chunk] = chunk_text("memory", "notes/a.md", "# Title\n\nbody", ChunkingPolicy())
        assert (chunk.start_line, chunk.end_line, chunk.text) == (1, 3, "# Title\n\nbody")
        assert (chunk.source, chunk.path, chunk.timestamp) == ("memory", "notes/a.md", None)

    def test_a_final_newline_is_not_an_extra_line(self) -> None:
        [chunk] = chunk_text("memory", "a.md", "one\ntwo\n", ChunkingPolicy())
        assert (chunk.end_line, chunk.text) == (2, "one\ntwo")

    def test_crlf_and_lone_cr_become_lf(self) -> None:
        [chunk] = chunk_text("memory", "a.md", "one\r\ntwo\rthree\r\n", ChunkingPolicy())
        assert (chunk.start_line, chunk.end_line, chunk.text) == (1, 3, "one\ntwo\nthree")

    def test_hash_and_id_follow_text_lines_and_position(self) -> None:
        chunks = chunk_text("memory", "a.md", "\n".join([NINE] * 5), ChunkingPolicy(8, 0))
        for ordinal, chunk in enumerate(chunks):
            assert chunk.hash == sha256_text(chunk.text)
            assert chunk.id == chunk_id(
                "memory", "a.md", chunk.start_line, chunk.end_line, chunk.hash, ordinal
            )


class TestChunkBoundaries:
    def test_lines_accumulate_until_the_budget_is_hit(self) -> None:
        chunks = chunk_text("memory", "a.md", "\n".join([NINE] * 5), ChunkingPolicy(8, 0))
        assert spans(chunks) == [(1, 3), (4, 5)]
        assert chunks[0].text == "\n".join([NINE] * 3)

    def test_overlap_carries_whole_trailing_lines_up_to_the_overlap(self) -> None:
        chunks = chunk_text("memory", "a.md", "\n".join([NINE] * 5), ChunkingPolicy(8, 3))
        assert spans(chunks) == [(1, 3), (3, 5)]

    def test_overlap_never_makes_a_chunk_exceed_the_budget(self) -> None:
        fifteen = "x" * 15
        chunks = chunk_text("memory", "a.md", "\n".join([fifteen] * 6), ChunkingPolicy(8, 8))
        assert spans(chunks) == [(1, 2), (2, 3), (3, 4), (4, 5), (5, 6)]
        assert all(estimate_tokens(c.text) <= 8 for c in chunks)

    def test_budget_has_a_floor_of_eight_tokens(self) -> None:
        chunks = chunk_text("memory", "a.md", "\n".join([NINE] * 5), ChunkingPolicy(1, 0))
        assert spans(chunks) == [(1, 3), (4, 5)]

    def test_a_line_longer_than_the_budget_is_cut_into_pieces(self) -> None:
        line = "".join(chr(ord("a") + i % 26) for i in range(100))
        chunks = chunk_text("memory", "a.md", line, ChunkingPolicy(8, 0))
        assert [len(c.text) for c in chunks] == [32, 32, 32, 4]
        assert "".join(c.text for c in chunks) == line
        assert spans(chunks) == [(1, 1)] * 4

    def test_identical_pieces_of_one_line_get_distinct_ids(self) -> None:
        chunks = chunk_text("memory", "a.md", "abcd" * 32, ChunkingPolicy(8, 0))
        assert len({c.hash for c in chunks}) == 1
        assert len({c.id for c in chunks}) == 4

    def test_identical_repeated_lines_get_distinct_ids(self) -> None:
        chunks = chunk_text(
            "memory", "a.md", "\n".join(["same line here"] * 10), ChunkingPolicy(8, 0)
        )
        assert len({c.id for c in chunks}) == len(chunks) > 1

    def test_chunks_of_only_blank_lines_are_dropped(self) -> None:
        text = "start\n" + "   \n" * 40 + "end"
        chunks = chunk_text("memory", "a.md", text, ChunkingPolicy(8, 0))
        assert [(c.text, c.start_line, c.end_line) for c in chunks] == [
            ("start", 1, 1),
            ("end", 42, 42),
        ]

    def test_blank_lines_at_chunk_edges_are_left_out(self) -> None:
        [chunk] = chunk_text("memory", "a.md", "\n\n  \ntext\n\nmore\n \n\n", ChunkingPolicy())
        assert (chunk.text, chunk.start_line, chunk.end_line) == ("text\n\nmore", 4, 6)

    def test_a_chunk_adding_only_blank_lines_after_its_overlap_is_dropped(self) -> None:
        text = "\n".join([NINE] * 3) + "\n" + "\n" * 40
        chunks = chunk_text("memory", "a.md", text, ChunkingPolicy(8, 3))
        assert spans(chunks) == [(1, 3)]


class TestLongLines:
    """With `sentence_cuts` (notes), a long line is cut between sentences, else words."""

    SENTENCE = "The cat sat on the mat. "  # 24 units: one fits an 8-token (32-unit) budget

    def test_a_long_line_is_cut_between_sentences(self) -> None:
        line = self.SENTENCE * 5
        chunks = chunk_text("memory", "a.md", line, ChunkingPolicy(16, 0), sentence_cuts=True)
        assert [c.text for c in chunks] == [self.SENTENCE * 2] * 2 + [self.SENTENCE]
        assert spans(chunks) == [(1, 1)] * 3

    def test_the_pieces_of_a_line_join_without_a_newline(self) -> None:
        line = self.SENTENCE * 5
        chunks = chunk_text("memory", "a.md", line, ChunkingPolicy(16, 0), sentence_cuts=True)
        assert "".join(c.text for c in chunks) == line
        assert all("\n" not in c.text for c in chunks)

    def test_the_overlap_carries_the_last_sentence_over(self) -> None:
        line = self.SENTENCE * 5
        chunks = chunk_text("memory", "a.md", line, ChunkingPolicy(16, 7), sentence_cuts=True)
        assert [c.text.count("cat") for c in chunks] == [2, 2, 2, 2]
        for before, after in pairwise(chunks):
            assert after.text.startswith(before.text[-len(self.SENTENCE) :].strip())

    def test_a_sentence_longer_than_the_budget_is_cut_between_words(self) -> None:
        line = " ".join(f"word{n:02d}" for n in range(20))  # 139 units, no sentence end
        chunks = chunk_text("memory", "a.md", line, ChunkingPolicy(8, 0), sentence_cuts=True)
        assert all(estimate_tokens(c.text) <= 8 for c in chunks)
        assert [w for c in chunks for w in c.text.split()] == line.split()

    def test_a_heading_shares_its_chunk_with_the_first_sentences_below_it(self) -> None:
        text = "# Title\n\n" + self.SENTENCE * 6
        chunks = chunk_text("memory", "a.md", text, ChunkingPolicy(20, 0), sentence_cuts=True)
        assert chunks[0].text.startswith("# Title\n\nThe cat")
        assert spans(chunks)[0] == (1, 3)

    def test_a_long_line_starts_a_chunk_of_its_own(self) -> None:
        text = "a short line before\n" + self.SENTENCE * 4
        chunks = chunk_text("memory", "a.md", text, ChunkingPolicy(16, 0), sentence_cuts=True)
        assert [(c.text, c.start_line) for c in chunks] == [
            ("a short line before", 1),
            (self.SENTENCE * 2, 2),
            (self.SENTENCE * 2, 2),
        ]

    def test_the_overlap_carried_into_a_long_line_is_dropped(self) -> None:
        text = "one\ntwo\n" + self.SENTENCE * 4
        chunks = chunk_text("memory", "a.md", text, ChunkingPolicy(16, 7), sentence_cuts=True)
        assert chunks[1].start_line == 3
        assert chunks[1].text.startswith("The cat")

    def test_no_chunk_opens_with_the_tail_of_the_line_before(self) -> None:
        text = self.SENTENCE * 4 + "\n" + "x" * 40
        chunks = chunk_text("memory", "a.md", text, ChunkingPolicy(16, 7), sentence_cuts=True)
        assert (chunks[-1].text, chunks[-1].start_line) == ("x" * 40, 2)

    def test_chinese_is_cut_after_a_full_stop(self) -> None:
        sentence = "我们讨论了新的索引方案。"  # 12 characters, 12 tokens
        chunks = chunk_text(
            "memory", "zh.md", sentence * 5, ChunkingPolicy(30, 0), sentence_cuts=True
        )
        assert [c.text for c in chunks] == [sentence * 2, sentence * 2, sentence]

    def test_transcripts_keep_the_budget_cut(self) -> None:
        line = self.SENTENCE * 5
        chunks = chunk_text("sessions", "s.jsonl", "before\n" + line, ChunkingPolicy(16, 0))
        assert [c.text for c in chunks] == ["before", line[:64], line[64:]]  # mid-word cut


class TestMarkdownHeadings:
    def test_a_heading_in_the_second_half_starts_the_next_chunk(self) -> None:
        text = "\n".join(["a" * 45, "## Section", "b" * 20, "c" * 30])
        chunks = chunk_text("memory", "a.md", text, ChunkingPolicy(20, 5))
        assert spans(chunks) == [(1, 1), (2, 4)]
        assert chunks[1].text.startswith("## Section")

    def test_a_heading_in_the_first_half_does_not_cut(self) -> None:
        text = "\n".join(["a" * 20, "## Section", "b" * 45, "c" * 30])
        chunks = chunk_text("memory", "a.md", text, ChunkingPolicy(20, 0))
        assert spans(chunks) == [(1, 3), (4, 4)]

    def test_a_hash_line_inside_a_code_fence_is_not_a_heading(self) -> None:
        text = "\n".join(["```", "a" * 45, "# comment", "b" * 20, "```", "c" * 30])
        chunks = chunk_text("memory", "a.md", text, ChunkingPolicy(20, 0))
        assert spans(chunks) == [(1, 4), (5, 6)]

    def test_a_tilde_line_inside_a_backtick_fence_does_not_end_it(self) -> None:
        text = "\n".join(["```", "~~~", "a" * 40, "# comment", "b" * 20, "```", "c" * 30])
        chunks = chunk_text("memory", "a.md", text, ChunkingPolicy(20, 0))
        assert spans(chunks) == [(1, 5), (6, 7)]

    def test_a_setext_heading_in_the_second_half_starts_the_next_chunk(self) -> None:
        text = "\n".join(["a" * 45, "", "Section", "-------", "b" * 20])
        chunks = chunk_text("memory", "a.md", text, ChunkingPolicy(20, 5))
        assert spans(chunks) == [(1, 1), (3, 5)]
        assert chunks[1].text.startswith("Section\n---")

    def test_a_chunk_starting_at_a_heading_carries_no_overlap(self) -> None:
        text = "\n".join(["a" * 45, "b" * 30, "# Heading", "c" * 10])
        chunks = chunk_text("memory", "a.md", text, ChunkingPolicy(20, 10))
        assert spans(chunks) == [(1, 2), (3, 4)]

    def test_without_a_heading_the_overlap_is_carried(self) -> None:
        text = "\n".join(["a" * 45, "b" * 30, "Not heading", "c" * 10])
        chunks = chunk_text("memory", "a.md", text, ChunkingPolicy(20, 10))
        assert spans(chunks) == [(1, 2), (2, 4)]


class TestChunkTextMultilingual:
    def test_chinese_chunks_stay_within_the_token_budget(self) -> None:
        text = chinese_text(3000)
        chunks = chunk_text("memory", "zh.md", text, ChunkingPolicy(400, 80))
        assert all(estimate_tokens(c.text) <= 400 for c in chunks)
        # The reference's 1600-character budget would have made this about two chunks.
        assert len(chunks) >= 8
        assert max(estimate_tokens(c.text) for c in chunks) > 300

    def test_emoji_are_never_split(self) -> None:
        text = "😀🎉" * 200
        chunks = chunk_text("memory", "a.md", text, ChunkingPolicy(8, 0))
        assert "".join(c.text for c in chunks) == text
        for chunk in chunks:
            chunk.text.encode("utf-8")  # raises on a lone surrogate

    @pytest.mark.parametrize(
        "cluster",
        [
            "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466",  # family: ZWJ
            "\U0001f469\U0001f3fd\u200d\U0001f4bb",  # technologist, skin tone, ZWJ
            "\U0001f1ef\U0001f1f5",  # a flag: two regional indicators
            "e\u0301\u0302",  # a letter with two combining accents
            "\u2764\ufe0f",  # a heart with its emoji variation selector
        ],
    )
    def test_a_visible_character_is_never_cut_in_two(self, cluster: str) -> None:
        for lead in range(len(cluster) + 1):  # every offset of the clusters against the budget
            text = "a" * lead + cluster * 40
            chunks = chunk_text("memory", "a.md", text, ChunkingPolicy(8, 0))
            assert "".join(c.text for c in chunks) == text
            for chunk in chunks:
                body = chunk.text.lstrip("a")
                assert len(body) % len(cluster) == 0 and body == cluster * (
                    len(body) // len(cluster)
                )

    def test_a_cluster_longer_than_the_budget_is_still_cut(self) -> None:
        text = "x" + "\u0301" * 100  # one letter under a hundred accents
        chunks = chunk_text("memory", "a.md", text, ChunkingPolicy(8, 0))
        assert "".join(c.text for c in chunks) == text
        assert len(chunks) > 1

    def test_raw_surrogate_pairs_are_kept_together(self) -> None:
        pair = "\ud83d\ude00"
        text = "a" + pair * 100
        chunks = chunk_text("memory", "a.md", text, ChunkingPolicy(8, 0))
        assert "".join(c.text for c in chunks) == text
        for chunk in chunks:
            assert not ("\ud800" <= chunk.text[-1] <= "\udbff")
            assert not ("\udc00" <= chunk.text[0] <= "\udfff")


class TestChunkTextLineMapping:
    def test_line_numbers_map_text_lines_to_transcript_lines(self) -> None:
        text = "User: hello\nAssistant: hi there\nUser: bye"
        [chunk] = chunk_text(
            "sessions", "sessions/s.jsonl", text, ChunkingPolicy(), line_numbers=[3, 7, 12]
        )
        assert (chunk.start_line, chunk.end_line) == (3, 12)

    def test_each_chunk_is_mapped_separately(self) -> None:
        text = "\n".join([NINE] * 5)
        chunks = chunk_text(
            "sessions", "s", text, ChunkingPolicy(8, 0), line_numbers=[2, 4, 6, 8, 10]
        )
        assert spans(chunks) == [(2, 6), (8, 10)]
        assert chunks[0].id == chunk_id("sessions", "s", 2, 6, chunks[0].hash, 0)

    def test_only_lf_crlf_and_cr_end_a_line_as_in_an_editor(self) -> None:
        # str.splitlines would also split at a form feed, NEL, U+2028 and U+2029.
        text = "a\x0cb\x85c\u2028d\u2029e\x1cf\nsecond\r\nthird\rfourth"
        [chunk] = chunk_text("memory", "m.md", text, ChunkingPolicy())
        assert (chunk.start_line, chunk.end_line) == (1, 4)
        assert chunk.text.split("\n")[0] == "a\x0cb\x85c\u2028d\u2029e\x1cf"

    def test_lines_beyond_the_map_keep_their_own_number(self) -> None:
        [chunk] = chunk_text("sessions", "s", "a\nb\nc", ChunkingPolicy(), line_numbers=[5])
        assert (chunk.start_line, chunk.end_line) == (5, 3)

    def test_chunk_timestamp_is_the_latest_known_timestamp_of_its_lines(self) -> None:
        text = "\n".join([NINE] * 5)
        chunks = chunk_text(
            "sessions",
            "s",
            text,
            ChunkingPolicy(8, 0),
            line_timestamps=[10.0, None, 30.0, None, None],
        )
        assert [c.timestamp for c in chunks] == [30.0, None]


_PIECES = st.sampled_from(
    [*"ab xyz\t中文한글😀#-。", "\r", "\r\n", "\n# ", "\n```\n", "word ", "  ", ". ", "、"]
)
_LINE = st.lists(_PIECES, max_size=40).map("".join)


class TestChunkTextProperties:
    @settings(max_examples=200, deadline=None)
    @given(
        lines=st.lists(_LINE, max_size=40),
        tokens=st.integers(1, 40),
        sentence_cuts=st.booleans(),
    )
    def test_without_overlap_chunks_hold_every_non_blank_character_once(
        self, lines: list[str], tokens: int, sentence_cuts: bool
    ) -> None:
        text = "\n".join(lines)
        chunks = chunk_text(
            "memory", "a.md", text, ChunkingPolicy(tokens, 0), sentence_cuts=sentence_cuts
        )
        assert re.sub(r"\s", "", "".join(c.text for c in chunks)) == re.sub(r"\s", "", text)

    @settings(max_examples=200, deadline=None)
    @given(
        lines=st.lists(_LINE, max_size=40),
        tokens=st.integers(1, 40),
        overlap=st.integers(0, 60),
        sentence_cuts=st.booleans(),
    )
    def test_chunks_cover_every_non_blank_line_within_budget(
        self, lines: list[str], tokens: int, overlap: int, sentence_cuts: bool
    ) -> None:
        text = "\n".join(lines)
        normalised = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        policy = ChunkingPolicy(tokens, overlap)
        chunks = chunk_text("memory", "a.md", text, policy, sentence_cuts=sentence_cuts)
        covered = {n for c in chunks for n in range(c.start_line, c.end_line + 1)}
        for number, line in enumerate(normalised, start=1):
            if line.strip():
                assert number in covered
        for chunk in chunks:
            assert chunk.text.strip()
            assert estimate_tokens(chunk.text) <= max(tokens, 8)
            interior = chunk.text.split("\n")[1:-1]
            assert interior == normalised[chunk.start_line : chunk.end_line - 1]
        assert [c.start_line for c in chunks] == sorted(c.start_line for c in chunks)
        assert len({c.id for c in chunks}) == len(chunks)
