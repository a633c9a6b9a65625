"""Adapter plumbing: BM25 exactly as SQLite FTS5's built-in bm25() computes it.

From FTS5's source (ext/fts5/fts5_aux.c, fts5Bm25Function), with k1 = 1.2 and b = 0.75:

* N is the number of rows of the table and avgdl its total token count divided by N;
* each phrase of the query gets idf = log((N - nHit + 0.5) / (nHit + 0.5)), where nHit counts
  rows containing the phrase, and an idf <= 0 (a phrase in more than half of the rows) is
  clamped to 1e-6;
* a row's score sums, over the phrases in query order, idf * f * (k1 + 1) /
  (f + k1 * (1 - b + b * D / avgdl)) with f the phrase's frequency in the row and D the row's
  token count; the rank is -score (lower is better).

The statistics are per agent (an agent's rows are what its own SQLite file would hold), so a
store copied between the two families ranks alike. The arithmetic is done in Python floats
(IEEE doubles, as in C) in the same order, so equal inputs give bit-identical ranks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

K1: Final = 1.2
B: Final = 0.75
MIN_IDF: Final = 1e-6


def idf(rows: int, hits: int) -> float:
    """FTS5's idf of a phrase found in `hits` of `rows` rows (clamped to 1e-6 when <= 0)."""
    value = math.log((float(rows) - float(hits) + 0.5) / (float(hits) + 0.5))
    return MIN_IDF if value <= 0.0 else value


def rank(idfs: Sequence[float], freqs: Sequence[float], length: int, avgdl: float) -> float:
    """Return FTS5's bm25() rank (negative, lower is better) of one row."""
    score = 0.0
    d = float(length)
    for weight, f in zip(idfs, freqs, strict=True):
        score += weight * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + B * d / avgdl)))
    return -1.0 * score
