"""Adapter: the Clock port on the real system clock."""

from __future__ import annotations

import time
from datetime import UTC, datetime


class SystemClock:
    """Wall time in UTC, a monotonic counter, and a real sleep."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(max(0.0, seconds))
