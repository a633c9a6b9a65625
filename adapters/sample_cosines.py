"""Adapters: the cosines of a query with a stored sample of vectors, for every store family.

`background_cosines` (the IndexStore's base rate for the confidence check) reads a sample of
stored vectors, differently in SQLite and PostgreSQL, and then scores them the same way; this
module exists so that scoring is written once. Pure numpy, imported when first scored: a CLI
process that never scores a vector does not load numpy (~0.1 s of its start).
"""

from __future__ import annotations

from collections.abc import Sequence


def sample_cosines(vector: Sequence[float], sample: Sequence[Sequence[float]]) -> list[float]:
    """Cosines of `vector` with each vector of `sample` of its dimension (others skipped)."""
    import numpy as np

    rows = [v for v in sample if len(v) == len(vector)]
    if not rows:
        return []
    matrix = np.asarray(rows, dtype=np.float64)
    query = np.asarray(vector, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(query))
    norms[norms == 0.0] = 1.0
    return [float(c) for c in (matrix @ query) / norms]
