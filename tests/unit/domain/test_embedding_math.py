"""Unit tests: cosine, UTF-8 budgets, input limits and request batching for embeddings."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlane.domain.embedding import (
    DEFAULT_MAX_INPUT_TOKENS,
    batch_by_budget,
    cosine,
    input_byte_limit,
    max_input_tokens,
    sanitize_and_normalize,
    split_to_utf8_limit,
    utf8_len,
)

# st.text() never yields surrogates; a str decoded with `surrogatepass` can hold them.
TEXT_WITH_SURROGATES = st.lists(
    st.sampled_from(["\ud83d", "\ude00", "\ud83d\ude00", "\udbff"]) | st.characters()
).map("".join)


class TestCosine:
    def test_parallel_orthogonal_and_opposite_vectors(self) -> None:
        assert cosine([1.0, 2.0], [2.0, 4.0]) == pytest.approx(1.0)
        assert cosine([1.0, 0.0], [0.0, 3.0]) == pytest.approx(0.0)
        assert cosine([1.0, 1.0], [-1.0, -1.0]) == pytest.approx(-1.0)

    def test_empty_or_zero_vectors_give_zero(self) -> None:
        assert cosine([], [1.0]) == 0.0
        assert cosine([0.0, 0.0], [1.0, 1.0]) == 0.0

    def test_only_the_common_prefix_is_compared(self) -> None:
        assert cosine([1.0, 0.0, 5.0], [1.0, 0.0]) == pytest.approx(1.0)

    def test_a_non_finite_result_gives_zero(self) -> None:
        assert cosine([math.inf, 1.0], [1.0, 1.0]) == 0.0


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


class TestMaxInputTokens:
    @pytest.mark.parametrize(
        ("provider", "model", "limit"),
        [
            ("openai", "text-embedding-3-small", 8192),
            ("openai", "text-embedding-ada-002", 8191),
            ("gemini", "gemini-embedding-001", 2048),
            ("gemini", "gemini-embedding-2-preview", 8192),
            ("voyage", "voyage-3-lite", 16000),
            ("voyage", "voyage-code-3", 32000),
            ("local", "multilingual-e5-small", 512),
        ],
    )
    def test_known_models_use_the_table(self, provider: str, model: str, limit: int) -> None:
        assert max_input_tokens(provider, model) == limit

    def test_lookup_ignores_case(self) -> None:
        assert max_input_tokens("OpenAI", "Text-Embedding-3-Large") == 8192

    def test_unknown_models_use_the_provider_default_then_the_global_default(self) -> None:
        assert max_input_tokens("gemini", "future-model") == 2048
        assert max_input_tokens("local", "some-gguf") == 2048
        assert max_input_tokens("mistral", "mistral-embed") == DEFAULT_MAX_INPUT_TOKENS

    def test_the_byte_limit_is_capped_by_the_hard_maximum(self) -> None:
        assert input_byte_limit("voyage", "voyage-3") == 8000
        assert input_byte_limit("local", "multilingual-e5-small") == 512


class TestBatchByBudget:
    def test_items_are_packed_while_the_total_fits(self) -> None:
        assert batch_by_budget(["aaaa", "bbbb", "cc", "d"], budget=8) == [[0, 1], [2, 3]]

    def test_an_item_larger_than_the_budget_forms_its_own_batch(self) -> None:
        assert batch_by_budget(["a", "x" * 20, "b"], budget=8) == [[0], [1], [2]]

    def test_bytes_not_characters_are_counted(self) -> None:
        assert batch_by_budget(["数据", "数据"], budget=8) == [[0], [1]]

    def test_the_item_count_is_capped(self) -> None:
        assert batch_by_budget(["a"] * 5, budget=100, max_items=2) == [[0, 1], [2, 3], [4]]

    def test_no_texts_give_no_batches(self) -> None:
        assert batch_by_budget([]) == []

    @given(st.lists(st.text(max_size=30), max_size=40), st.integers(min_value=1, max_value=60))
    def test_every_index_appears_once_in_order_and_batches_fit(
        self, texts: list[str], budget: int
    ) -> None:
        batches = batch_by_budget(texts, budget=budget)
        assert [i for batch in batches for i in batch] == list(range(len(texts)))
        for batch in batches:
            assert batch
            assert len(batch) == 1 or sum(utf8_len(texts[i]) for i in batch) <= budget
