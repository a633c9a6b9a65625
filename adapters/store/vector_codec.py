"""Adapter plumbing: vectors as stored (float32 little-endian blobs), and the finiteness check.

numpy is imported by the first call: every store module reads this one, and a command that
stores or reads no vector (keyword-only, `status`, `get`) then starts without it (~0.1 s).
"""

from __future__ import annotations

from collections.abc import Sequence


def to_blob(vector: Sequence[float]) -> bytes:
    """Encode a vector as the stored float32 little-endian blob."""
    import numpy as np

    return np.asarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes) -> list[float]:
    """Decode a stored float32 blob."""
    import numpy as np

    values: list[float] = np.frombuffer(blob, dtype="<f4").tolist()
    return values
