"""Application: copy agents' indexes between stores, checking that nothing was lost.

A copy of several agents is all or nothing: when one fails (the target errors, the source
cannot be read, the user interrupts it), the agents this run had written are removed from the
target again, so a rerun is not refused by a half-copied target the user must sort out by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memlane.application.ports.index_store import StoreError
from memlane.application.ports.index_transfer import (
    IndexTransfer,
    TransferCounts,
    TransferTargetNotEmpty,
)


class CopyMismatch(StoreError):
    """The target's counts differ from the source's after a copy."""


class CopyFailed(StoreError):
    """A copy failed part-way; what it had written was removed from the target again."""


class CopyNotUndone(StoreError):
    """A copy failed part-way and removing what it had written failed too; the message names
    the agents left in the target and how to remove them."""


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


@dataclass(frozen=True, slots=True)
class _Written:
    agent: str
    how_to_remove: str  # asked when the target opened: it may be unreachable by the undo
    # Why the undo must leave it (the target held something of the agent before, an embedding
    # cache beside no index, which removing the agent would take too); None: removable.
    keep: str | None = None


def copy_agents(
    agents: Sequence[str],
    source_of: Callable[[str], IndexTransfer],
    target_of: Callable[[str], IndexTransfer],
    copied: Callable[[str, TransferCounts], None],
) -> None:
    """Copy each agent's index into its empty target, reporting each to `copied`.

    The caller checks first that the target holds no index of any of `agents`. When one fails,
    every agent this run wrote, the one under way included, is removed from the target before
    CopyFailed says so; an interrupt (KeyboardInterrupt) is a failure too. Raises CopyNotUndone
    when the removal fails as well. An agent whose target turned out to hold an index already
    (TransferTargetNotEmpty, another writer since the check) is never removed.
    """
    written: list[_Written] = []
    agent = ""
    try:
        for agent in agents:
            source = source_of(agent)
            try:
                target = target_of(agent)
                try:
                    cached = target.counts().cache
                    keep = (
                        f"it held {cached} cached embedding(s) before this copy" if cached else None
                    )
                    written.append(_Written(agent, target.how_to_remove(), keep))
                    try:
                        counts = copy_index(source, target)
                    except TransferTargetNotEmpty:
                        written.pop()  # not ours: nothing of this run is in it
                        raise
                finally:
                    target.close()
            finally:
                source.close()
            copied(agent, counts)
    except (Exception, KeyboardInterrupt) as exc:
        raise _undo(agent, exc, written, target_of) from exc


class _Kept(Exception):
    """Why the undo left an agent in the target on purpose."""


def _undo(
    agent: str,
    exc: BaseException,
    written: list[_Written],
    target_of: Callable[[str], IndexTransfer],
) -> StoreError:
    """Remove what this run wrote; the error to raise for the failure `exc` of `agent`."""
    what = f"copying {agent} " + (
        "was interrupted" if isinstance(exc, KeyboardInterrupt) else f"failed: {exc}"
    )
    left: list[tuple[_Written, BaseException]] = []
    for entry in written:
        if entry.keep is not None:
            left.append((entry, _Kept(entry.keep)))
            continue
        # Each agent on its own: one that cannot be removed must not keep the others in place.
        try:
            target = target_of(entry.agent)
            try:
                target.remove()
            finally:
                target.close()
        except (Exception, KeyboardInterrupt) as failure:
            left.append((entry, failure))
    if left:
        return CopyNotUndone(
            f"{what}; removing what this run wrote from the target failed too, so "
            f"{', '.join(e.agent for e, _ in left)} "
            f"{'is' if len(left) == 1 else 'are'} left in the target, and a rerun refuses "
            "until they are removed: "
            + "; ".join(
                f"{e.agent} ({str(f) or type(f).__name__}): {e.how_to_remove}" for e, f in left
            )
        )
    if not written:
        return CopyFailed(f"{what}; nothing was copied")
    return CopyFailed(
        f"{what}; nothing was copied: what this run wrote ({', '.join(e.agent for e in written)}) "
        "was removed from the target again, so a rerun copies every agent"
    )
