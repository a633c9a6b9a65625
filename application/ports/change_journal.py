"""Port: the change journal, how a long-lived process knows nothing changed since its last scan.

A search must see every change that finished before it was asked (an edit, then a search at
once). A fresh CLI process scans the sources by stat to know; a long-lived one (the daemon)
instead asks the kernel: `seen()` counts the file-system events under the sources' roots, and a
change that finished before `seen()` was called is in that count, because the kernel queues the
event inside the writer's own system call. Equal counts before two requests mean no change in
between; the scan is then skipped.
"""

from __future__ import annotations

from typing import Protocol


class ChangeJournal(Protocol):
    """File-system events under a fixed set of roots, counted (not interpreted)."""

    def seen(self) -> int | None:
        """Take in every event queued so far; the number of changes seen since the start, or
        None when the journal cannot vouch for completeness (events lost, watches missing):
        the caller then scans."""
        ...

    def close(self) -> None:
        """Stop counting (idempotent)."""
        ...
