"""Test-wide fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import structlog


@pytest.fixture(autouse=True)
def _fresh_structlog() -> Iterator[None]:
    """Each test starts from structlog's defaults (entry points configure it globally)."""
    structlog.reset_defaults()
    yield
    structlog.reset_defaults()
