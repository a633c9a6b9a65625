"""A WatchLease in memory: one object stands for the lease file every process would share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from memlane.application.ports.watch_lease import LeaseHolder


@dataclass
class FakeWatchLease:
    """`holder_pid` set: some process holds it; `history` records every freshness said.
    Another holder (any pid but 1) answers `confirm` with `answers`; this process, once it
    holds the lease (pid 1), with the function it gave `answer`."""

    holder_pid: int | None = None
    scope: str = ""
    fresh: bool = False
    history: list[bool] = field(default_factory=list)
    released: int = 0
    answers: bool = True
    answerer: Callable[[], bool] | None = None
    asked: int = 0

    def acquire(self, scope: str) -> bool:
        if self.holder_pid not in (None, 1):
            return False
        self.holder_pid, self.scope, self.fresh = 1, scope, False
        self.history.append(False)
        return True

    def set_fresh(self, fresh: bool) -> None:
        if self.holder_pid == 1:
            self.fresh = fresh
            self.history.append(fresh)

    def release(self) -> None:
        if self.holder_pid == 1:
            self.holder_pid = None
            self.answerer = None
            self.released += 1

    def answer(self, fresh: Callable[[], bool]) -> None:
        if self.holder_pid == 1:
            self.answerer = fresh

    def confirm(self) -> bool:
        self.asked += 1
        if self.holder_pid is None:
            return False
        if self.holder_pid == 1:
            return self.answerer is not None and self.answerer()
        return self.answers

    def holder(self) -> LeaseHolder | None:
        if self.holder_pid is None:
            return None
        return LeaseHolder(pid=self.holder_pid, scope=self.scope, fresh=self.fresh)
