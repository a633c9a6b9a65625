"""Test helper: count the calls a store makes to one of its modules' functions (a scan, a count),
whichever store instance makes them, so a test can say that a kept answer spared one."""

from __future__ import annotations

from types import ModuleType

import pytest


def count_calls(monkeypatch: pytest.MonkeyPatch, module: ModuleType, name: str) -> list[int]:
    """Wrap `module.<name>` to record each call; the list grows by one per call."""
    calls: list[int] = []
    real = getattr(module, name)

    def counted(*args: object, **kw: object) -> object:
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(module, name, counted)
    return calls
