"""Fake: a Clock that only moves when told to."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


@dataclass
class FakeClock:
    """Starts at T0; `advance` and `sleep` move both wall and monotonic time."""

    current: datetime = T0
    mono: float = 1000.0
    sleeps: list[float] = field(default_factory=list)

    def now(self) -> datetime:
        return self.current

    def monotonic(self) -> float:
        return self.mono

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.advance(seconds)

    def advance(self, seconds: float) -> None:
        self.current += timedelta(seconds=seconds)
        self.mono += seconds
