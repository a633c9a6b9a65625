"""A ChangeJournal in memory: the test says how many changes the kernel has reported."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class FakeChangeJournal:
    roots: list[str] = field(default_factory=list)
    count: int | None = 0  # None: cannot vouch (events lost)
    closed: bool = False

    def seen(self) -> int | None:
        return None if self.closed else self.count

    def close(self) -> None:
        self.closed = True
