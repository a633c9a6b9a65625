"""Port: mutual exclusion of one agent's sync across processes and hosts.

A shared store (PostgreSQL) may be written by several hosts serving the same agent; two syncs
of one agent at once would do every file's work twice. `hold()` blocks until no other process
syncs the agent and releases on exit; an adapter that had to wait says so in its log.
`try_hold()` never waits: a search's sync uses it, because a search must answer from the index
as it is rather than wait for another host's sync, however long that runs. A store of one
process family (the SQLite file, whose writes are already serialised) needs none.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol


class SyncLock(Protocol):
    """The exclusive right to sync one agent."""

    def hold(self) -> AbstractContextManager[None]:
        """Wait for the right to sync (logging the wait if there is one); release on exit."""
        ...

    def try_hold(self) -> AbstractContextManager[bool]:
        """Take the right if it is free: True, released on exit; False at once when another
        process syncs the agent (nothing is held then)."""
        ...
