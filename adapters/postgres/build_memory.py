"""Adapter plumbing: how much `maintenance_work_mem` an HNSW build gets.

pgvector builds the graph in `maintenance_work_mem`; once the graph fills it, pgvector says so
in a NOTICE and carries on inserting into the on-disk index, about 10x slower (session 11's 1M
load filled a fixed 512 MB at ~250,000 of 1,000,000 tuples, then crawled: bench/RESULTS.md). So
the build is given what its rows need, measured per tuple by bench/studies/hnsw_build_memory.py
(serial builds, 8 MB): 971 / 2,251 / 3,789 / 6,865 bytes at 64 / 384 / 768 / 1,536 dimensions
with m = 16, and 511-532 bytes more with m = 32; i.e. the float32 vector plus ~32 bytes per
neighbour slot plus ~210. The 1M load's own figure (512 MB / ~250,000 = ~2,150 at 384) agrees.
A parallel build (2 workers) fitted the same per tuple after a fixed ~4.1 MB (8 MB held 1,889
tuples at 384), which the 64 MB floor and the margin cover.

The need is capped (the memory is the server's, taken for the build's length): the larger of
`CAP_BYTES` and the server's own `maintenance_work_mem`, so an operator who wants a bigger build
raises it where PostgreSQL is configured (`ALTER DATABASE ... SET maintenance_work_mem`). A
need above the cap is logged as a warning naming that setting, never silently slow.
"""

from __future__ import annotations

from typing import Final

import structlog
from sqlalchemy import Connection

log = structlog.get_logger()

# pgvector's default graph degree; the store's index sets no `m`.
HNSW_M: Final = 16
# Headroom over the measured per-tuple bytes (the levels above 0 are drawn at random).
MARGIN: Final = 1.15
# Never below the server's default: small builds keep what they always had.
FLOOR_BYTES: Final = 64 * 1024**2
# The most memlane asks for on its own: a 1M-chunk agent at 384 dimensions needs ~2.6 GB.
CAP_BYTES: Final = 4 * 1024**3
_MB: Final = 1024**2


def tuple_bytes(dims: int, m: int = HNSW_M) -> int:
    """Bytes one vector of `dims` takes in the in-memory graph (see module docstring)."""
    return 4 * dims + 32 * m + 256


def needed_bytes(rows: int, dims: int, m: int = HNSW_M) -> int:
    """`maintenance_work_mem` for building the graph of `rows` vectors without spilling."""
    return max(FLOOR_BYTES, int(rows * tuple_bytes(dims, m) * MARGIN))


def build_bytes(rows: int, dims: int, server_bytes: int, cap: int = CAP_BYTES) -> int:
    """What the build gets: its need, within max(cap, the server's setting); never less than
    the server's setting (an operator's larger value stands)."""
    return max(server_bytes, min(needed_bytes(rows, dims), max(cap, server_bytes)))


def spills(rows: int, dims: int, granted: int) -> bool:
    """Whether a build of `rows` vectors given `granted` bytes would run out of graph memory."""
    return rows * tuple_bytes(dims) > granted


def set_for_build(conn: Connection, dims: int, cap: int = CAP_BYTES) -> int:
    """SET LOCAL maintenance_work_mem for building the HNSW index of `dims` over the rows
    present; return the bytes set. Warns when the rows will not fit."""
    rows = int(
        conn.exec_driver_sql(
            f"SELECT count(*) FROM memlane_chunks WHERE dims = {int(dims)}"
        ).scalar_one()
    )
    server = int(
        conn.exec_driver_sql(
            "SELECT setting::bigint * 1024 FROM pg_settings WHERE name = 'maintenance_work_mem'"
        ).scalar_one()
    )
    granted = build_bytes(rows, dims, server, cap)
    conn.exec_driver_sql(
        "SELECT set_config('maintenance_work_mem', %s, true)", (f"{granted // 1024}kB",)
    )
    if spills(rows, dims, granted):
        need_mb = -(-needed_bytes(rows, dims) // _MB)
        log.warning(
            "hnsw_build_spills",
            rows=rows,
            dims=dims,
            need_mb=need_mb,
            granted_mb=granted // _MB,
            hint=(
                "the vector index build will outgrow its memory and run several times "
                "slower; to give it more, run ALTER DATABASE <db> SET maintenance_work_mem "
                f"= '{need_mb}MB' (memlane uses the larger of that and {CAP_BYTES // _MB} MB)"
            ),
        )
    return granted
