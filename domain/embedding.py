"""Domain: vector arithmetic and input-size rules for embeddings (§4.5, §7, §8.1)."""

from __future__ import annotations

import math
from collections.abc import Sequence


def sanitize_and_normalize(vector: Sequence[float]) -> list[float]:
    """Replace non-finite components by 0 and scale to unit L2 norm (a ~zero vector is kept)."""
    clean = [x if math.isfinite(x) else 0.0 for x in vector]
    norm = math.sqrt(math.fsum(x * x for x in clean))
    if norm < 1e-10:
        return clean
    return [x / norm for x in clean]
