"""Application: copy one agent's index between stores, then check that nothing was lost."""

from __future__ import annotations

from memlane.application.ports.index_store import StoreError
from memlane.application.ports.index_transfer import IndexTransfer, TransferCounts


class CopyMismatch(StoreError):
    """The target's counts differ from the source's after a copy."""


def copy_index(source: IndexTransfer, target: IndexTransfer) -> TransferCounts:
    """Copy everything from `source` into the empty `target`; return the verified counts.

    Vectors travel as stored, so nothing is re-embedded. Raises TransferTargetNotEmpty
    (nothing written) or CopyMismatch (the counts of both sides, for the operator).
    """
    expected = source.counts()
    target.load(source.snapshot(), source.chunks(), source.cache())
    got = target.counts()
    if got != expected:
        raise CopyMismatch(f"copied {got}, but the source holds {expected}")
    return got
