"""memlane: long-term memory for AI agents (hybrid search over notes and transcripts).

    import memlane

    with memlane.open(workspace="~/agent", config={"provider": "local"}) as memory:
        for hit in memory.search("what did we decide about the API?").results:
            print(hit.score, hit.path, hit.start_line)

Everything a host application uses is importable from here: `open`, the manager it returns, the
values the manager's calls return and the errors they raise (`__all__`). Importing the package
stays cheap: those values and errors are plain dataclasses and exceptions, while the storage,
the embedding providers and the container load on the first `open` (and `MemoryManager` on
first access).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memlane.application.memory import MemoryManager
    from memlane.application.ports.embedding import (
        EmbeddingError,
        EmbeddingRejected,
        EmbeddingTimeout,
        EmbeddingUnavailable,
        ProviderNotConfigured,
    )
    from memlane.application.ports.event_log import EventLogError, RecordedEvent
    from memlane.application.ports.file_source import (
        FileMissing,
        FileRefused,
        FileTooLarge,
        FileUnreadable,
        SourceError,
    )
    from memlane.application.ports.index_store import (
        DimensionMismatch,
        StoreCorrupt,
        StoreError,
        StoreReadOnly,
    )
    from memlane.application.reports import (
        GetResult,
        RecoveryStats,
        SearchMode,
        SearchResponse,
        SourceStatus,
        StatusReport,
        SyncProgress,
        SyncReport,
    )
    from memlane.application.workspace import WorkspaceError, WorkspaceMismatch, WorkspaceMissing
    from memlane.domain.agents import AgentsNotComparable, UnknownAgent
    from memlane.domain.errors import ConfigError, DomainError, InvalidQuery
    from memlane.domain.events import Event
    from memlane.domain.search import ScoreExplanation, SearchResult
    from memlane.domain.sources import Source, SourceIssue

# The one place the version is written: pyproject.toml reads it (setuptools dynamic `attr`).
__version__ = "0.1.0"

__all__ = [
    "AgentsNotComparable",
    "ConfigError",
    "DimensionMismatch",
    "DomainError",
    "EmbeddingError",
    "EmbeddingRejected",
    "EmbeddingTimeout",
    "EmbeddingUnavailable",
    "Event",
    "EventLogError",
    "FileMissing",
    "FileRefused",
    "FileTooLarge",
    "FileUnreadable",
    "GetResult",
    "InvalidQuery",
    "MemoryManager",
    "ProviderNotConfigured",
    "RecordedEvent",
    "RecoveryStats",
    "ScoreExplanation",
    "SearchMode",
    "SearchResponse",
    "SearchResult",
    "Source",
    "SourceError",
    "SourceIssue",
    "SourceStatus",
    "StatusReport",
    "StoreCorrupt",
    "StoreError",
    "StoreReadOnly",
    "SyncProgress",
    "SyncReport",
    "UnknownAgent",
    "WorkspaceError",
    "WorkspaceMismatch",
    "WorkspaceMissing",
    "__version__",
    "open",
]


def open(
    *,
    workspace: str | os.PathLike[str] | None = None,
    agent_id: str | None = None,
    state_dir: str | os.PathLike[str] | None = None,
    config: Mapping[str, object] | None = None,
    config_path: str | None = None,
    env: Mapping[str, str] | None = None,
    start_background: bool = False,
    move_workspace: bool = False,
) -> MemoryManager:
    """Open (or reuse) the memory manager of one agent and workspace; close it when done.

    Args:
        workspace: the folder holding MEMORY.md and memory/.
        agent_id: whose memory this is.
        state_dir: where the index and transcripts live.
        config: a memorySearch block (camelCase keys, as in the JSON5 file); when given, it is
            used instead of the config file.
        config_path: a JSON5 config file to read instead of the default one.
        env: environment variables to read instead of `os.environ`.
        start_background: start the file watcher and timers now.
        move_workspace: bind the index to `workspace` although it recorded another one.

    What is not given is resolved as the CLI resolves it (environment, config file, defaults).
    The same (agent, workspace, settings) returns the same live manager until it is closed.
    Raises ConfigError for an unknown or out-of-range setting, WorkspaceMismatch when the
    index recorded another workspace (and `move_workspace` is off), WorkspaceMissing when the
    workspace folder does not exist or is not a folder.
    """
    from memlane.entrypoints.api import open_manager

    return open_manager(
        workspace=workspace,
        agent_id=agent_id,
        state_dir=state_dir,
        config=config,
        config_path=config_path,
        env=env,
        start_background=start_background,
        move_workspace=move_workspace,
    )


# Where each public name lives: loaded on first access, so that `import memlane` (and the
# console script's daemon client, tests/architecture/test_daemon_client_imports.py) stays cheap.
_LAZY: dict[str, str] = {
    "AgentsNotComparable": "memlane.domain.agents",
    "ConfigError": "memlane.domain.errors",
    "DimensionMismatch": "memlane.application.ports.index_store",
    "DomainError": "memlane.domain.errors",
    "EmbeddingError": "memlane.application.ports.embedding",
    "EmbeddingRejected": "memlane.application.ports.embedding",
    "EmbeddingTimeout": "memlane.application.ports.embedding",
    "EmbeddingUnavailable": "memlane.application.ports.embedding",
    "Event": "memlane.domain.events",
    "EventLogError": "memlane.application.ports.event_log",
    "FileMissing": "memlane.application.ports.file_source",
    "FileRefused": "memlane.application.ports.file_source",
    "FileTooLarge": "memlane.application.ports.file_source",
    "FileUnreadable": "memlane.application.ports.file_source",
    "GetResult": "memlane.application.reports",
    "InvalidQuery": "memlane.domain.errors",
    "ProviderNotConfigured": "memlane.application.ports.embedding",
    "RecordedEvent": "memlane.application.ports.event_log",
    "RecoveryStats": "memlane.application.reports",
    "ScoreExplanation": "memlane.domain.search",
    "SearchMode": "memlane.application.reports",
    "SearchResponse": "memlane.application.reports",
    "SearchResult": "memlane.domain.search",
    "Source": "memlane.domain.sources",
    "SourceError": "memlane.application.ports.file_source",
    "SourceIssue": "memlane.domain.sources",
    "SourceStatus": "memlane.application.reports",
    "StatusReport": "memlane.application.reports",
    "StoreCorrupt": "memlane.application.ports.index_store",
    "StoreError": "memlane.application.ports.index_store",
    "StoreReadOnly": "memlane.application.ports.index_store",
    "SyncProgress": "memlane.application.reports",
    "SyncReport": "memlane.application.reports",
    "UnknownAgent": "memlane.domain.agents",
    "WorkspaceError": "memlane.application.workspace",
    "WorkspaceMismatch": "memlane.application.workspace",
    "WorkspaceMissing": "memlane.application.workspace",
    "MemoryManager": "memlane.application.memory",
}


if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
