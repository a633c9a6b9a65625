"""Every test of the benchmark harness carries the `bench` marker (`-m "not bench"` skips them)."""

from __future__ import annotations

from pathlib import Path

import pytest

_HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # A conftest hook sees the whole session's items: mark only those collected from this folder.
    for item in items:
        if _HERE in item.path.parents:
            item.add_marker(pytest.mark.bench)
