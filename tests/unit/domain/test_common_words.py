"""The words a memory holds almost everywhere, left out of what the vector leg embeds."""

from __future__ import annotations

from memlane.domain.common_words import (
    MIN_CHUNKS,
    candidate_words,
    common_words,
    without_words,
)


class TestCandidateWords:
    def test_content_words_once_lowercased_in_order(self) -> None:
        assert candidate_words("What did Melanie paint? Melanie's PAINTING in 2023") == [
            "melanie",
            "paint",
            "painting",
        ]

    def test_cjk_runs_stop_words_numbers_and_single_letters_are_not_judged(self) -> None:
        assert candidate_words("東京 서울 what is 42 I'm") == []


class TestCommonWords:
    def test_more_than_the_share_of_the_chunks(self) -> None:
        counts = {"melanie": 180, "pottery": 4, "half": 100}

        assert common_words(counts, 200, share=0.5) == ["melanie"]

    def test_a_small_memory_or_share_zero_or_one_leaves_every_word(self) -> None:
        counts = {"melanie": MIN_CHUNKS - 1}

        assert common_words(counts, MIN_CHUNKS - 1, share=0.5) == []
        assert common_words({"melanie": 200}, 200, share=0.0) == []
        assert common_words({"melanie": 200}, 200, share=1.0) == []
        assert common_words({"melanie": 200}, 200, share=float("nan")) == []


class TestWithoutWords:
    def test_every_occurrence_any_case_with_its_possessive(self) -> None:
        text = "What did Melanie's kids do with CAROLINE and melanie?"

        assert without_words(text, ["melanie", "caroline"]) == "What did kids do with and ?"

    def test_part_of_a_longer_word_stays(self) -> None:
        assert without_words("Melanies tea with Mel", ["mel"]) == "Melanies tea with"

    def test_nothing_left_out_or_nothing_left_gives_none(self) -> None:
        assert without_words("What did Melanie paint?", []) is None
        assert without_words("What did Melanie paint?", ["caroline"]) is None
        assert without_words("What did Melanie do?", ["melanie"]) is None  # stop words only
