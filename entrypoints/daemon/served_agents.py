"""Which agent's manager a daemon serves, and which of them it may close.

A `memlane daemon` opens a manager per agent on first use and closes them all when it stops;
a `watch` / `serve` / `mcp` process lending its socket (sharing.py) serves the one manager it
holds (adopted), which stays that process's to close.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memlane.application.memory import MemoryManager


class ServedAgents:
    """The managers served by agent id, under one lock (requests run in their own threads)."""

    def __init__(self) -> None:
        self._managers: dict[str, MemoryManager] = {}
        self._adopted: set[str] = set()  # agents whose manager the host process owns
        self._lock = threading.Lock()

    def adopt(self, agent_id: str, manager: MemoryManager) -> None:
        """Serve the host process's own manager for its agent."""
        with self._lock:
            self._managers[agent_id] = manager
            self._adopted.add(agent_id)

    @property
    def adopted(self) -> frozenset[str]:
        """The agents served with an adopted manager (a lending process serves no other)."""
        with self._lock:
            return frozenset(self._adopted)

    def get(self, agent_id: str) -> MemoryManager | None:
        with self._lock:
            return self._managers.get(agent_id)

    def claim(
        self,
        agent_id: str,
        manager: MemoryManager,
        *,
        start: Callable[[], None],
        stopping: Callable[[], bool],
    ) -> bool:
        """Serve `manager` for its agent unless another is served already or the daemon is
        stopping (True: it is served).

        Both checks and `start` (watching the workspace) run under the lock: two first requests
        for one agent cannot both start a manager, nor can one be added after `release_owned`."""
        with self._lock:
            known = self._managers.get(agent_id)
            if known is manager:
                return True
            if known is not None or stopping():
                return False
            self._managers[agent_id] = manager
            start()
            return True

    def release_owned(self) -> list[MemoryManager]:
        """Stop serving every agent; the managers this process opened, for it to close."""
        with self._lock:
            owned = [m for a, m in self._managers.items() if a not in self._adopted]
            self._managers = {}
        return owned


def stored_agents(state: Path) -> list[str]:
    """The agents with a SQLite index in the state dir (`agents/<id>/memory.db`)."""
    return sorted(p.parent.name for p in (state / "agents").glob("*/memory.db"))


def without_workspace(argv: list[str]) -> list[str]:
    """The start options less `--workspace`: it names the first agent's workspace only."""
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--workspace":
            skip = True
        else:
            kept.append(arg)
    return kept
