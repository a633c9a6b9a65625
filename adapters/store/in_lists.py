"""Adapter plumbing: `IN (...)` parameter lists kept below SQLite's bound on variables."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

_IN_CHUNK = 500  # bound on `IN (...)` parameters per statement


def placeholders(count: int) -> str:
    """Return `count` comma-separated `?` marks."""
    return ",".join("?" * count)


def batches(values: Sequence[object], size: int = _IN_CHUNK) -> Iterable[Sequence[object]]:
    """Split `values` into slices small enough for one `IN (...)` list."""
    for start in range(0, len(values), size):
        yield values[start : start + size]
