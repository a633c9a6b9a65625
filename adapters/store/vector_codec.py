"""Adapter plumbing: vectors as stored (float32 little-endian blobs), and the finiteness check."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def to_blob(vector: Sequence[float]) -> bytes:
    """Encode a vector as the stored float32 little-endian blob."""
    return np.asarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes) -> list[float]:
    """Decode a stored float32 blob."""
    values: list[float] = np.frombuffer(blob, dtype="<f4").tolist()
    return values


def sample_cosines(vector: Sequence[float], sample: Sequence[Sequence[float]]) -> list[float]:
    """Cosines of `vector` with each vector of `sample` of its dimension (others skipped)."""
    rows = [v for v in sample if len(v) == len(vector)]
    if not rows:
        return []
    matrix = np.asarray(rows, dtype=np.float64)
    query = np.asarray(vector, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(query))
    norms[norms == 0.0] = 1.0
    return [float(c) for c in (matrix @ query) / norms]
