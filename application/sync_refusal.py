"""Application: syncs that stop before writing anything, for a reason only the user can settle.

The index answers as it was meanwhile: searches say why it was not synced, `status` says it, the
command that asked fails with the way on. Two refusals: a sync that would remove most of the index
(`mass_delete.MassDeletion`), and an index built by a newer memlane (`IndexFromNewerMemlane`).
"""

from __future__ import annotations

FORCE_HINT = "memlane index --force"


class SyncRefused(Exception):
    """A sync stopped before writing anything; the index is as it was."""


class IndexFromNewerMemlane(SyncRefused):
    """The index was built by a newer memlane: syncing it would rebuild it down to this one's
    chunking and embed every chunk again, and the newer one would rebuild it back up next time
    (two versions sharing a state dir took turns re-embedding everything)."""

    def __init__(self, detail: str) -> None:
        self.detail = detail
        super().__init__(
            f"the index was built by a newer memlane ({detail}); this one does not rebuild it "
            "down to its own, which would embed every chunk again: it is searched as it is. "
            f"Use the newer memlane, or rebuild the index with this one on purpose: `{FORCE_HINT}`"
        )
