"""A SyncLock in memory: one object stands for the database lock every host would share."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass
class FakeSyncLock:
    """`held_elsewhere`: another process syncs the agent. `hold` then fails the test, since a
    real one would wait for as long as that sync runs; `waits` counts the holds asked for."""

    held_elsewhere: bool = False
    held: bool = False
    waits: int = 0

    @contextmanager
    def hold(self) -> Iterator[None]:
        self.waits += 1
        assert not self.held_elsewhere, "would wait for another process's sync"
        with self._holding():
            yield

    @contextmanager
    def try_hold(self) -> Iterator[bool]:
        if self.held_elsewhere:
            yield False
            return
        with self._holding():
            yield True

    @contextmanager
    def _holding(self) -> Iterator[None]:
        assert not self.held, "held twice by one process"
        self.held = True
        try:
            yield
        finally:
            self.held = False
