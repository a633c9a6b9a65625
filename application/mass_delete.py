"""Application: the guard against a sync that would remove a large share of the index (#30).

An unmounted share, an emptied folder or the wrong workspace all look, to change detection, like
notes that were deleted; syncing them would remove every one from the index (and on a shared
PostgreSQL store, from every host's memory), and embedding them again takes hours. So a sync
that would remove more than `sync.maxDeletePercent` of one source's indexed files stops before
it writes anything, and says how to go on when the removal is meant (`--allow-mass-delete`).

Removing a single file is never a mass deletion: deleting one note of three is ordinary work.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import structlog

from memlane.application.ports.index_store import IndexStore
from memlane.application.sync_refusal import SyncRefused
from memlane.domain import events
from memlane.domain.sources import Source

ALLOW_HINT = "memlane index --allow-mass-delete"
log = structlog.get_logger()


@dataclass(frozen=True, slots=True)
class Removal:
    """How many of one source's indexed files a sync would remove."""

    source: Source
    removed: int
    indexed: int

    @property
    def percent(self) -> float:
        return 100.0 * self.removed / self.indexed if self.indexed else 0.0


class MassDeletion(SyncRefused):
    """A sync would remove more than the allowed share of the index; nothing was written."""

    def __init__(
        self,
        removals: Iterable[Removal],
        *,
        limit: float,
        workspace: str,
        outcome: str = "sync stopped before removing anything",
    ) -> None:
        self.removals = tuple(removals)
        self.limit = limit
        self.workspace = workspace
        parts = ", ".join(
            f"{r.removed} of the {r.indexed} indexed {_NOUN[r.source]} ({r.percent:.0f} %)"
            for r in self.removals
        )
        where = f" (workspace {workspace})" if workspace else ""
        self.summary = (
            f"{outcome}: it would remove {parts}, more than sync.maxDeletePercent ({limit:g} %)"
        )
        super().__init__(
            f"{outcome}: it would remove {parts}, more than "
            f"sync.maxDeletePercent ({limit:g} %), because they are missing from the "
            f"sources{where}. An unmounted, emptied or wrong folder looks like this: check it. "
            f"If the files were deleted on purpose, run `{ALLOW_HINT}` "
            "(Python: manager.sync(allow_mass_delete=True))."
        )


_NOUN: Mapping[Source, str] = {"memory": "notes", "sessions": "transcripts"}


def over_limit(
    found: Iterable[events.Event], indexed: Mapping[Source, int], limit: float
) -> list[Removal]:
    """The sources whose removals in `found` exceed `limit` percent of their indexed files
    (`indexed`: files per source now in the index); [] when the sync may go on."""
    removed = Counter(e.source for e in found if isinstance(e, events.FileDeleted))
    return removals_over_limit(removed, indexed, limit)


def removals_over_limit(
    removed: Mapping[Source, int], indexed: Mapping[Source, int], limit: float
) -> list[Removal]:
    """The sources whose `removed` file counts exceed `limit` percent of their `indexed` ones."""
    refused = []
    for source, count in sorted(removed.items()):
        total = indexed.get(source, 0)
        if count >= 2 and total and 100.0 * count / total > limit:
            refused.append(Removal(source=source, removed=count, indexed=total))
    return refused


def refuse_mass_deletion(
    found: Iterable[events.Event],
    store: IndexStore,
    *,
    limit: float,
    workspace: str,
    before_raising: Callable[[], None] = lambda: None,
) -> None:
    """Raise MassDeletion when the events a sync is about to log remove too much of `store`."""
    found = list(found)
    if not any(isinstance(e, events.FileDeleted) for e in found):
        return  # the common case reads no counts
    refused = over_limit(found, {c.source: c.files for c in store.counts()}, limit)
    if refused:
        before_raising()
        log.info(  # the caller shows the refusal (CLI error, search warning, syncer log)
            "sync_mass_delete_refused",
            removals={r.source: [r.removed, r.indexed] for r in refused},
            limit_percent=limit,
        )
        raise MassDeletion(refused, limit=limit, workspace=workspace)
