"""Unit tests: where a line too long for one chunk may be cut."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memlane.domain.line_pieces import sentences, words


class TestSentences:
    def test_a_sentence_ends_at_a_stop_followed_by_whitespace(self) -> None:
        line = 'It rained. Did it stop?  "Yes." Then it snowed! end'
        assert sentences(line) == [
            "It rained. ",
            "Did it stop?  ",
            '"Yes." ',
            "Then it snowed! ",
            "end",
        ]

    def test_a_stop_inside_a_word_or_number_is_no_end(self) -> None:
        assert sentences("Version 3.11 of e.g.memlane ran") == ["Version 3.11 of e.g.memlane ran"]

    def test_full_width_stops_end_a_sentence_without_whitespace(self) -> None:
        line = "私は学生です。彼も「学生だ。」そうです！はい"
        assert sentences(line) == ["私は学生です。", "彼も「学生だ。」", "そうです！", "はい"]

    def test_korean_sentences_end_like_latin_ones(self) -> None:
        assert sentences("회의는 끝났다. 내일 다시 한다.") == ["회의는 끝났다. ", "내일 다시 한다."]

    def test_a_line_with_no_end_is_one_piece(self) -> None:
        assert sentences("no stop here") == ["no stop here"]
        assert sentences("") == [""]


class TestWords:
    def test_words_keep_the_whitespace_after_them(self) -> None:
        assert words("a bb  ccc") == ["a ", "bb  ", "ccc"]

    def test_cjk_clause_marks_end_a_piece(self) -> None:
        assert words("今日は、晴れ，明日；雨") == ["今日は、", "晴れ，", "明日；", "雨"]


_TEXT = st.lists(st.sampled_from([*'ab 中。！.?、, \t"」', "e.g.", "3.11", "word "])).map("".join)


@given(_TEXT)
def test_the_pieces_put_together_are_the_text(text: str) -> None:
    assert "".join(sentences(text)) == text
    assert "".join(words(text)) == text
    assert all(sentences(text)) or text == ""
