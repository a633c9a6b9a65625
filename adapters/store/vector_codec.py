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
