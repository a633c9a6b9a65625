"""Port: the time, injected so the domain and the use cases never read a clock themselves."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol


class Clock(Protocol):
    """Wall-clock and monotonic time."""

    def now(self) -> datetime:
        """Return the current time as a timezone-aware UTC datetime."""
        ...

    def monotonic(self) -> float:
        """Return seconds from an arbitrary origin that never goes backwards (for durations)."""
        ...

    def sleep(self, seconds: float) -> None:
        """Wait `seconds` (a fake advances its time instead of waiting)."""
        ...
