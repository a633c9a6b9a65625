"""Unit tests: cosine, UTF-8 budgets, input limits and request batching for embeddings."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlane.domain.embedding import (
    sanitize_and_normalize,
    split_to_utf8_limit,
    utf8_len,
)

# st.text() never yields surrogates; a str decoded with `surrogatepass` can hold them.
TEXT_WITH_SURROGATES = st.lists(
    st.sampled_from(["\ud83d", "\ude00", "\ud83d\ude00", "\udbff"]) | st.characters()
).map("".join)


class TestSanitizeAndNormalize:
    def test_non_finite_components_become_zero_and_the_norm_one(self) -> None:
        assert sanitize_and_normalize([3.0, math.nan, 4.0]) == pytest.approx([0.6, 0.0, 0.8])


class TestUtf8Len:
    @pytest.mark.parametrize(
        ("text", "size"), [("", 0), ("abc", 3), ("é", 2), ("数据", 6), ("😀", 4)]
    )
    def test_counts_utf8_bytes(self, text: str, size: int) -> None:
        assert utf8_len(text) == size

    def test_a_lone_surrogate_counts_three_bytes_and_a_pair_four(self) -> None:
        assert utf8_len("\ud800") == 3
        assert utf8_len("\ud83d\ude00") == 4


class TestSplitToUtf8Limit:
    def test_a_text_that_fits_is_one_piece(self) -> None:
        assert split_to_utf8_limit("hello", 5) == ["hello"]

    def test_a_non_positive_limit_disables_splitting(self) -> None:
        assert split_to_utf8_limit("hello", 0) == ["hello"]

    def test_ascii_is_cut_greedily(self) -> None:
        assert split_to_utf8_limit("abcdefg", 3) == ["abc", "def", "g"]

    def test_multi_byte_characters_are_never_cut(self) -> None:
        assert split_to_utf8_limit("数据库表", 7) == ["数据", "库表"]

    def test_a_character_wider_than_the_limit_is_its_own_piece(self) -> None:
        assert split_to_utf8_limit("a😀b", 2) == ["a", "😀", "b"]

    def test_a_surrogate_pair_is_never_separated(self) -> None:
        text = "ab\ud83d\ude00c"  # 😀 as two surrogates, as `surrogatepass` decoding leaves it
        assert split_to_utf8_limit(text, 4) == ["ab", "\ud83d\ude00", "c"]
        assert split_to_utf8_limit(text, 5) == ["ab", "\ud83d\ude00c"]
        assert split_to_utf8_limit(text, 6) == ["ab\ud83d\ude00", "c"]

    @given(
        TEXT_WITH_SURROGATES | st.text(),
        st.integers(min_value=1, max_value=64),
    )
    def test_pieces_rejoin_exactly_and_respect_the_limit(self, text: str, limit: int) -> None:
        pieces = split_to_utf8_limit(text, limit)
        assert "".join(pieces) == text
        for piece in pieces:
            one_character = len(piece) == 1 or (len(piece) == 2 and utf8_len(piece) == 4)
            assert utf8_len(piece) <= limit or one_character
