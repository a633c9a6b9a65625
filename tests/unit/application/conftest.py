"""Builders for application tests: the container's application wiring over fakes only."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import pytest

from memlane.application.embedding_runtime import EmbeddingRuntime, Selection
from memlane.application.memory import MemoryManager
from memlane.application.ports.embedding import EmbeddingProvider
from memlane.domain.config import MemorySettings, QuerySettings
from memlane.entrypoints.container.application import Application
from tests.fakes.change_journal import FakeChangeJournal
from tests.fakes.clock import FakeClock
from tests.fakes.embedding import FakeEmbeddingProvider
from tests.fakes.event_log import FakeEventLog
from tests.fakes.file_source import FakeChangeWatcher, FakeFileSource
from tests.fakes.index_store import FakeIndexStore
from tests.fakes.sync_lock import FakeSyncLock
from tests.fakes.watch_lease import FakeWatchLease

LEASE_SCOPE = '["/fake/workspace", "sqlite:/fake/memory.db"]'


@dataclass
class World:
    """Everything a test may poke at: the fakes and a way to (re)build the manager."""

    memory: FakeFileSource = field(default_factory=lambda: FakeFileSource(source_name="memory"))
    sessions: FakeFileSource = field(default_factory=lambda: FakeFileSource(source_name="sessions"))
    store: FakeIndexStore = field(default_factory=FakeIndexStore)
    log: FakeEventLog = field(default_factory=FakeEventLog)
    clock: FakeClock = field(default_factory=FakeClock)
    embedder: FakeEmbeddingProvider | None = field(default_factory=FakeEmbeddingProvider)
    fallback: EmbeddingProvider | None = None
    requested: str = "auto"  # the configured provider's name (an explicit one is selected at once)
    watcher: FakeChangeWatcher | None = None
    lease: FakeWatchLease | None = None
    journal: FakeChangeJournal | None = None  # what a watching manager's journal factory gives
    host_lock: FakeSyncLock | None = None  # a shared store's cross-host sync lock
    settings: MemorySettings = field(
        default_factory=lambda: MemorySettings(query=QuerySettings(min_score=0.0))
    )

    def manager(self, **settings_changes: object) -> MemoryManager:
        return self.application(**settings_changes).manager()

    def application(self, **settings_changes: object) -> Application:
        """The container's wiring of the use cases, over the fakes."""
        settings = replace(self.settings, **settings_changes) if settings_changes else self.settings  # type: ignore[arg-type]
        embedder = self.embedder

        def select() -> Selection:
            return Selection(provider=embedder, reason=None if embedder else "no provider")

        select_fallback: Callable[[], Selection] | None = None
        if self.fallback is not None:
            fallback = self.fallback

            def select_fallback() -> Selection:
                return Selection(provider=fallback)

        return Application(
            agent_id="main",
            workspace="/fake/workspace",
            settings=settings,
            store=self.store,
            event_log=self.log,
            available_sources={"memory": self.memory, "sessions": self.sessions},
            runtime=EmbeddingRuntime(select, select_fallback, self.requested),
            clock=self.clock,
            scope_hash="scope-1",
            watcher=self.watcher,
            lease=self.lease,
            lease_scope=LEASE_SCOPE,
            journal=None if self.journal is None else self._journal,
            host_lock=self.host_lock,
        )

    def _journal(self, roots: list[str]) -> FakeChangeJournal:
        assert self.journal is not None
        self.journal.roots = roots
        return self.journal


@pytest.fixture
def world() -> World:
    return World()


def message(role: str, text: str, ts: str = "2026-11-20T09:00:00Z") -> str:
    """One transcript line in the reference JSONL format."""
    import json

    record = {"type": "message", "message": {"role": role, "content": text}, "timestamp": ts}
    return json.dumps(record, ensure_ascii=False) + "\n"
