"""Test helper: count the scans for note chunks lacking pieces that a store module makes."""

from __future__ import annotations

from types import ModuleType

import pytest

from memlane.domain.chunks import Chunk


def count_scans(monkeypatch: pytest.MonkeyPatch, module: ModuleType) -> list[int]:
    """Wrap `module.missing` (a store's chunk_pieces module) to record each call, whichever
    store instance makes it; the list grows by one per scan."""
    calls: list[int] = []
    real = module.missing

    def counted(*args: object, **kw: object) -> list[tuple[int, Chunk]]:
        calls.append(1)
        found: list[tuple[int, Chunk]] = real(*args, **kw)
        return found

    monkeypatch.setattr(module, "missing", counted)
    return calls
