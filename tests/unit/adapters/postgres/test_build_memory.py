"""The HNSW build's memory: sized from its rows, capped, never below the server's setting."""

from __future__ import annotations

import pytest

from memlane.adapters.postgres.build_memory import (
    CAP_BYTES,
    FLOOR_BYTES,
    build_bytes,
    needed_bytes,
    spills,
    tuple_bytes,
)

MB = 1024**2


@pytest.mark.parametrize(
    ("dims", "m", "measured"),
    # bench/studies/hnsw_build_memory.py: 8 MB over the tuples pgvector said fitted, serial.
    [
        (64, 16, 971),
        (384, 16, 2251),
        (768, 16, 3789),
        (1536, 16, 6865),
        (64, 32, 1483),
        (384, 32, 2760),
        (768, 32, 4297),
        (1536, 32, 7378),
    ],
)
def test_the_per_tuple_bytes_cover_pgvectors_measured_graph_without_much_slack(
    dims: int, m: int, measured: int
) -> None:
    assert measured <= tuple_bytes(dims, m) <= measured * 1.07


def test_session_elevens_million_rows_get_what_they_need_under_the_cap() -> None:
    """512 MB filled at ~250,000 of 1M 384-dimension tuples; the need now covers all of them."""
    need = needed_bytes(1_000_000, 384)
    assert 1_000_000 * 2150 < need < CAP_BYTES
    granted = build_bytes(1_000_000, 384, server_bytes=64 * MB)
    assert granted == need
    assert not spills(1_000_000, 384, granted)


def test_a_small_build_keeps_the_servers_default() -> None:
    assert needed_bytes(1000, 384) == FLOOR_BYTES
    assert build_bytes(1000, 384, server_bytes=64 * MB) == 64 * MB


def test_an_operators_larger_setting_stands_and_raises_the_cap() -> None:
    assert build_bytes(1000, 384, server_bytes=8192 * MB) == 8192 * MB
    rows = 4_000_000  # ~9.8 GB needed at 384 dimensions
    assert build_bytes(rows, 384, server_bytes=64 * MB) == CAP_BYTES
    assert spills(rows, 384, CAP_BYTES)
    assert build_bytes(rows, 384, server_bytes=16 * 1024 * MB) == 16 * 1024 * MB
    assert not spills(rows, 384, 16 * 1024 * MB)


def test_a_cap_below_the_need_is_what_the_build_gets_and_it_spills() -> None:
    granted = build_bytes(1_000_000, 384, server_bytes=64 * MB, cap=512 * MB)
    assert granted == 512 * MB
    assert spills(1_000_000, 384, granted)
