"""Unit tests: snippet truncation and citations."""

from __future__ import annotations

import unicodedata

from memlane.domain.snippets import citation_for, focused_snippet, make_snippet


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


class TestSnippetBoundaries:
    def test_a_cut_inside_a_word_ends_at_the_space_before_it(self) -> None:
        assert make_snippet("alpha beta gamma", limit=13) == "alpha beta"

    def test_a_cut_at_a_space_keeps_the_whole_words(self) -> None:
        assert make_snippet("alpha beta gamma", limit=11) == "alpha beta"

    def test_a_long_word_without_a_nearby_space_keeps_the_character_cut(self) -> None:
        assert make_snippet("a " + "x" * 100, limit=60) == "a " + "x" * 58

    def test_cjk_text_is_cut_at_a_character(self) -> None:
        assert make_snippet("停机 窗口调整到周六凌晨", limit=6) == "停机 窗口调"

    def test_a_combining_mark_is_never_cut_from_its_letter(self) -> None:
        assert make_snippet("ae\u0301b", limit=2) == "a"
        assert make_snippet("cafe\u0301 x", limit=5) == "cafe\u0301"

    def test_a_snippet_never_starts_a_mark_it_cannot_finish(self) -> None:
        for limit in range(1, 12):
            snippet = make_snippet("e\u0301\u0302te\u0301 \u00e9t\u00e9", limit=limit)
            text = "e\u0301\u0302te\u0301 \u00e9t\u00e9"
            assert len(snippet) == len(text) or not unicodedata.combining(text[len(snippet)])


class TestSnippetGraphemes:
    """A cut never leaves half of what a reader sees as one character at the snippet's end."""

    FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # man ZWJ woman ZWJ girl

    def test_a_zwj_emoji_sequence_is_kept_whole_or_left_out(self) -> None:
        for limit in range(3, 3 + len(self.FAMILY)):
            snippet = make_snippet("ab " + self.FAMILY + " cd", limit=limit)
            assert snippet in ("ab", "ab " + self.FAMILY), limit

    def test_an_emoji_keeps_its_variation_selector_and_skin_tone(self) -> None:
        assert make_snippet("ok \u2764\ufe0f!", limit=4) == "ok"
        assert make_snippet("ok \U0001f44d\U0001f3fd!", limit=4) == "ok"
        assert make_snippet("no 1\ufe0f\u20e3!", limit=5) == "no"  # keycap one

    def test_a_flag_s_two_letters_stay_together(self) -> None:
        jp, fr = "\U0001f1ef\U0001f1f5", "\U0001f1eb\U0001f1f7"
        assert make_snippet(jp + fr + "x", limit=3) == jp
        assert make_snippet(jp + fr + "x", limit=4) == jp + fr

    def test_a_spacing_vowel_sign_stays_with_its_consonant(self) -> None:
        # कि: KA + VOWEL SIGN I, a spacing mark of combining class 0.
        assert make_snippet("\u0915\u093f\u0915\u093f", limit=3) == "\u0915\u093f"

    def test_conjoining_hangul_jamo_stay_one_syllable(self) -> None:
        han = "\u1112\u1161\u11ab"  # 한 as three jamo
        assert make_snippet(han + han, limit=4) == han
        assert make_snippet("\ud55c\u11ab\u1100", limit=1) == ""  # 한 + a final: one syllable


class TestFocusedSnippet:
    """A chunk longer than the snippet shows the part holding the query's words."""

    STEPS = "\n".join(
        f"{i}. Step {i}: check the health and restart the pods." for i in range(1, 31)
    )

    def _runbook(self) -> str:
        lines = self.STEPS.split("\n")
        lines[24] = "NOTE: the recovery word for the failover bridge is quokka-lighthouse."
        return "\n".join(lines)

    def test_the_snippet_moves_to_the_lines_holding_the_words(self) -> None:
        text = self._runbook()
        assert text.index("quokka") > 700  # the head alone would not show it

        snippet = focused_snippet(text, ["recovery", "word", "failover", "bridge"])

        assert "quokka-lighthouse" in snippet
        assert snippet.startswith("… ") and len(snippet) <= 700
        assert snippet[2:].removesuffix(" …") in text  # lines of the chunk, unchanged

    def test_the_snippet_starts_at_a_line(self) -> None:
        snippet = focused_snippet(self._runbook(), ["failover"])

        assert self._runbook()[self._runbook().index(snippet[2:12]) - 1] == "\n"

    def test_words_the_head_already_shows_keep_the_head(self) -> None:
        snippet = focused_snippet(self._runbook(), ["health", "restart"])

        assert snippet.startswith("1. Step 1:") and snippet.endswith(" …")

    def test_a_hit_found_by_meaning_alone_keeps_its_head(self) -> None:
        text = self._runbook()

        assert focused_snippet(text, []) == focused_snippet(text, ["absent"])
        assert focused_snippet(text, []).startswith("1. Step 1:")

    def test_a_long_word_matches_its_other_endings(self) -> None:
        text = "filler line\n" * 80 + "We deployed the gateway on Tuesday.\n"

        assert "deployed the gateway" in focused_snippet(text, ["deploying"])

    def test_a_short_latin_term_matches_whole_words_only(self) -> None:
        text = "see item 14 and 24 here\n" * 40 + "harbor 4 shipped\n"

        assert "harbor 4 shipped" in focused_snippet(text, ["harbor", "4"])

    def test_inside_one_long_line_it_starts_at_the_sentence(self) -> None:
        text = (
            "Intro words that say nothing. " * 40
            + "The PENGUIN-77 ticket is the login bug. "
            + "Outro words. " * 60
        )

        snippet = focused_snippet(text, ["penguin", "77"])

        assert snippet.startswith("… The PENGUIN-77 ticket")

    def test_words_near_the_end_still_fill_the_snippet(self) -> None:
        """The window moves back from the chunk's end: not a half-empty snippet."""
        text = "Intro words that say nothing. " * 40 + "The PENGUIN-77 ticket is the login bug."

        snippet = focused_snippet(text, ["penguin", "77"])

        assert snippet.endswith("The PENGUIN-77 ticket is the login bug.")
        assert len(snippet) > 600 and snippet.startswith("… ")

    def test_the_last_line_of_a_runbook_comes_with_the_lines_before_it(self) -> None:
        lines = [f"{i}. Check the gauges on rack {i} and note them." for i in range(1, 40)]
        text = "\n".join([*lines, "Rollback: run deploy.sh --rollback v41"])

        snippet = focused_snippet(text, ["rollback"])

        assert snippet.endswith("Rollback: run deploy.sh --rollback v41")
        assert len(snippet) > 600 and snippet.startswith("… ")
        assert text[text.index(snippet[2:20]) - 1] == "\n"  # from a line's start

    def test_trailing_whitespace_does_not_make_a_cut(self) -> None:
        text = "x" * 690 + " " * 30

        assert focused_snippet(text, ["x"]) == "x" * 690

    def test_cjk_terms_are_found_inside_text(self) -> None:
        text = "无关的内容。" * 150 + "数据库迁移推迟到下周。"

        assert "数据库迁移推迟" in focused_snippet(text, ["数据", "据库", "迁移", "推迟"])

    def test_a_short_text_is_whole(self) -> None:
        assert focused_snippet("short note", ["note"]) == "short note"
