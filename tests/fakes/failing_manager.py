"""FailingManager: a stand-in for MemoryManager (the driving side) whose calls raise one error.

The error-policy contract (tests/contract/test_error_faces.py) drives every face with it, so
each face's own error handling sees exactly the exception the application would raise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from memlane.application.ports.event_log import RecordedEvent
from memlane.application.reports import GetResult, SearchResponse, StatusReport, SyncReport
from memlane.application.sync_trigger import SyncTrigger
from memlane.domain.config import MemorySettings


class FailingManager:
    """Every use case raises `error`; `settings` are the defaults (memory on)."""

    def __init__(self, error: BaseException) -> None:
        self.error = error
        self.agent_id = "main"
        self.workspace = "/nonexistent-workspace"
        self.settings = MemorySettings()

    def search(
        self,
        query: str,
        *,
        max_results: int | None = None,
        min_score: float | None = None,
        explain: bool = False,
        session_key: str | None = None,
        citations: bool = False,
        agents: Sequence[str] | str | None = None,
        since: str | None = None,
        until: str | None = None,
        as_of: str | None = None,
    ) -> SearchResponse:
        raise self.error

    def get(
        self,
        path: str,
        *,
        from_line: int | None = None,
        lines: int | None = None,
        agent: str | None = None,
    ) -> GetResult:
        raise self.error

    def sync(
        self,
        *,
        force: bool = False,
        trigger: SyncTrigger = SyncTrigger.EXPLICIT,
        progress: object = None,
        wait_for_vectors: bool = True,
    ) -> SyncReport:
        raise self.error

    def status(self, *, deep: bool = False) -> StatusReport:
        raise self.error

    def recent_events(self, limit: int = 50) -> list[RecordedEvent]:
        raise self.error

    def subscribe(self, callback: Callable[[RecordedEvent], None]) -> Callable[[], None]:
        raise self.error
