"""memlane: long-term memory for AI agents (hybrid search over notes and transcripts).

The public entry point for host applications is :func:`memlane.open`, which builds the
dependency-injection container and returns a :class:`~memlane.application.memory.MemoryManager`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memlane.application.memory import MemoryManager


def open(**kwargs: Any) -> MemoryManager:
    """Open (or reuse) the memory manager for one agent and workspace. See entrypoints.api."""
    from memlane.entrypoints.api import open_manager

    return open_manager(**kwargs)
