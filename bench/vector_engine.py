"""Bench-only: make the store's code-file vector engine answer the harness's small stores.

The SQLite store answers its vector leg from the exact float32 matrix below
`code_file_place.MIN_ROWS` vectors (20,000) and from the code file (bits, int8, exact float32
re-scoring) above it. Every benchmark store is below that size, so without this the harness
never measures the engine that serves large stores. `bench run --force-vector-codes` sets the
threshold to 0 in the harness's own process, so every store it opens builds and answers from a
code file: the same switch the store's tests flip. Users have no such setting, on purpose (below
the threshold the exact matrix is cheaper and never misses).

A forced run must really have used the file: `engine_state` reads the store's own report after a
mode's queries, the runner records it per unit and mode, and `check_engine` stops the run when a
forced run was answered exactly (a store that kept its old engine, a threshold not applied).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

from memlane.adapters.store import code_file_place


class IndexState(Protocol):
    """The slice of the store's VectorIndexState read here."""

    @property
    def engine(self) -> str: ...

    @property
    def vectors(self) -> int | None: ...

    @property
    def state(self) -> str: ...


class EngineReport(Protocol):
    """The slice of a status report read here (memlane's StatusReport has it)."""

    @property
    def vector_index(self) -> IndexState | None: ...


class EngineNotForced(RuntimeError):
    """A run that forced the code engine was answered without a code file."""


@contextmanager
def forced_code_engine(forced: bool) -> Iterator[None]:
    """Within the block, when `forced`, stores opened in this process build a code file at any
    size (otherwise nothing changes)."""
    if not forced:
        yield
        return
    previous = code_file_place.MIN_ROWS
    code_file_place.MIN_ROWS = 0
    try:
        yield
    finally:
        code_file_place.MIN_ROWS = previous


def engine_state(report: EngineReport) -> str:
    """The vector engine a store's status reports, in one line (`codes: 1907 vectors, opened`)."""
    index = report.vector_index
    if index is None:
        return "unknown: the store reports no vector engine"
    covered = "no file" if index.vectors is None else f"{index.vectors} vectors"
    return f"{index.engine}: {covered}, {index.state}"


def check_engine(report: EngineReport, where: str) -> None:
    """Raise EngineNotForced when `report` says the store has no code file (after a run that
    forced one)."""
    index = report.vector_index
    if index is None or index.engine != "codes" or index.vectors is None:
        raise EngineNotForced(
            f"{where}: --force-vector-codes was given but the store answered without a code "
            f"file ({engine_state(report)})"
        )
