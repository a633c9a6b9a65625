"""Ports: what the application needs from the outside world, as typing.Protocols."""

from memlane.application.ports.clock import Clock
from memlane.application.ports.embedding import (
    EmbeddingError,
    EmbeddingProvider,
    EmbeddingRejected,
    EmbeddingTimeout,
    EmbeddingUnavailable,
    ProviderNotConfigured,
    Vector,
)
from memlane.application.ports.event_log import EventLog, EventLogError, RecordedEvent
from memlane.application.ports.file_source import (
    ChangeWatcher,
    FileMissing,
    FileRefused,
    FileSource,
    FileTooLarge,
    FileUnreadable,
    ScanResult,
    SourceError,
)
from memlane.application.ports.index_store import (
    CacheKey,
    DimensionMismatch,
    IndexedFile,
    IndexRebuild,
    IndexStore,
    IndexWriter,
    SourceCount,
    StoreCorrupt,
    StoreError,
    StoreReadOnly,
    VectorProgress,
)
from memlane.application.ports.sync_lock import SyncLock

__all__ = [
    "CacheKey",
    "ChangeWatcher",
    "Clock",
    "DimensionMismatch",
    "EmbeddingError",
    "EmbeddingProvider",
    "EmbeddingRejected",
    "EmbeddingTimeout",
    "EmbeddingUnavailable",
    "EventLog",
    "EventLogError",
    "FileMissing",
    "FileRefused",
    "FileSource",
    "FileTooLarge",
    "FileUnreadable",
    "IndexRebuild",
    "IndexStore",
    "IndexWriter",
    "IndexedFile",
    "ProviderNotConfigured",
    "RecordedEvent",
    "ScanResult",
    "SourceCount",
    "SourceError",
    "StoreCorrupt",
    "StoreError",
    "StoreReadOnly",
    "SyncLock",
    "Vector",
    "VectorProgress",
]
