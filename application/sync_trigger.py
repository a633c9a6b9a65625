"""Application: why a sync runs (SyncTrigger), and the error of a sync that could not commit."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Final

from memlane.application.messagebus import HandlerFailure


class SyncTrigger(enum.StrEnum):
    """Why a sync runs. The value is what SyncReport.reason and the gRPC request carry."""

    EXPLICIT = "explicit"  # a caller asked (CLI, API, gRPC)
    FIRST_SEARCH = "first-search"  # the first search found no index at all
    # The scan a search runs before it reads (the CLI's `refresh`): asked for with the search,
    # so not automatic; every transcript growth is indexed, as by an explicit sync.
    BEFORE_SEARCH = "before-search"
    WATCH = "watch"  # the file watcher saw a change
    INTERVAL = "interval"  # the periodic timer fired
    SEARCH = "search"  # a search found the index dirty
    SESSION_START = "session-start"  # the first search of a new agent session

    @property
    def automatic(self) -> bool:
        """Whether nobody asked for this sync, so transcript growth thresholds apply."""
        return self in _AUTOMATIC

    @classmethod
    def parse(cls, value: str) -> SyncTrigger:
        """Return the trigger named `value`; raise ValueError listing the known names."""
        try:
            return cls(value)
        except ValueError:
            known = ", ".join(t.value for t in cls)
            msg = f"unknown sync trigger {value!r} (known: {known})"
            raise ValueError(msg) from None


_AUTOMATIC: Final = frozenset(
    {SyncTrigger.WATCH, SyncTrigger.INTERVAL, SyncTrigger.SEARCH, SyncTrigger.SESSION_START}
)


class SyncFailed(Exception):
    """Some change could not be committed (a full disk, an I/O error): the sync did not finish.

    Whatever was not committed is as it was; its events stay pending and the next sync retries
    them. `failures` lists each handler failure; the message is one line for the CLI.
    """

    def __init__(self, failures: Sequence[HandlerFailure]) -> None:
        first = failures[0]
        more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
        super().__init__(
            f"{len(failures)} change(s) could not be written: {first.subject}: "
            f"{first.error}{more}; the index keeps its previous state, the next sync retries"
        )
        self.failures = tuple(failures)
