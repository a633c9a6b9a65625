"""Application: the `memorySearch.enabled: false` rule, shared by the use-case families."""

from __future__ import annotations

from memlane.domain.config import MemorySettings
from memlane.domain.errors import DISABLED_REASON, MemoryDisabled


def require_enabled(settings: MemorySettings) -> None:
    """The `memorySearch.enabled: false` rule, for every face: memory off means no index at all,
    so no sync, search or read (MemoryDisabled); `status` still reports, saying it is off.

    The entry points turn MemoryDisabled into their form (entrypoints/errors.py); the CLI asks
    before it opens an index at all.
    """
    if not settings.enabled:
        raise MemoryDisabled(DISABLED_REASON)
