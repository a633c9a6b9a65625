"""Application: the `memorySearch.enabled: false` rule, shared by the use-case families."""

from __future__ import annotations

from memlane.domain.config import MemorySettings
from memlane.domain.errors import DISABLED_REASON, MemoryDisabled


def require_enabled(settings: MemorySettings) -> None:
    """Memory off means no index at all: no sync, no search (MemoryDisabled; the entry points
    turn it into the reference's disabled payload)."""
    if not settings.enabled:
        raise MemoryDisabled(DISABLED_REASON)
