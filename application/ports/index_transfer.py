"""Port: one agent's whole index read and written in bulk, to move it between stores.

`memlane store copy` reads everything an agent's store holds (meta, files, chunks with their
vectors, the embedding cache, the event log with its positions, handler tracking) from one
IndexTransfer and writes it into another, of the same or the other family, without
re-embedding. Positions are kept as they are: tracking refers to them.

Errors: StoreError (index_store) for any storage failure; `TransferTargetNotEmpty` when the
target agent already holds an index (copying never merges). `load` is one transaction: when it
raises, nothing of the agent was written. A copy of several agents that fails part-way uses
`remove` to take back the agents it had written (application/store_copy.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from memlane.application.ports.embedding import Vector
from memlane.application.ports.index_store import CacheKey, IndexedFile, StoreError
from memlane.domain.chunks import Chunk, ContentHash
from memlane.domain.index_meta import IndexMeta


class TransferTargetNotEmpty(StoreError):
    """The target already holds an index for this agent; nothing was written."""


@dataclass(frozen=True, slots=True)
class ChunkRecord:
    """A chunk with its vector (None: keyword-only) and the model that made it."""

    chunk: Chunk
    vector: Vector | None
    model: str


@dataclass(frozen=True, slots=True)
class CacheRecord:
    """One embedding cache entry."""

    key: CacheKey
    hash: ContentHash
    vector: Vector


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """An event as stored: position, stable type name, version, JSON record, time."""

    position: int
    type: str
    version: int
    data: str
    occurred_at: str


@dataclass(frozen=True, slots=True)
class TransferCounts:
    """What one agent's store holds, compared after a copy."""

    files: int
    chunks: int
    vectors: int
    cache: int
    events: int
    last_position: int
    tracking: int


@dataclass(frozen=True, slots=True)
class IndexSnapshot:
    """Everything of one agent's index except the chunks and cache (streamed separately)."""

    meta: IndexMeta | None
    files: Sequence[IndexedFile]
    events: Sequence[StoredEvent]
    last_position: int
    tracking: dict[str, int]


class IndexTransfer(Protocol):
    """Bulk access to one agent's index in one store."""

    def counts(self) -> TransferCounts:
        """Return what the agent's store holds."""
        ...

    def snapshot(self) -> IndexSnapshot:
        """Return meta, files, events, last position and tracking."""
        ...

    def chunks(self) -> Iterator[ChunkRecord]:
        """Yield every chunk with its vector, file by file."""
        ...

    def cache(self) -> Iterator[CacheRecord]:
        """Yield every cache entry, least recently used first."""
        ...

    def load(
        self,
        snapshot: IndexSnapshot,
        chunks: Iterator[ChunkRecord],
        cache: Iterator[CacheRecord],
    ) -> None:
        """Write a whole index in one transaction; TransferTargetNotEmpty if one exists."""
        ...

    def remove(self) -> None:
        """Delete the agent's whole index from this store, so nothing of it is left.

        Only for undoing a copy into a target that held no index of the agent.
        """
        ...

    def how_to_remove(self) -> str:
        """How to delete the agent's index by hand, said when `remove` failed."""
        ...

    def close(self) -> None:
        """Release connections; idempotent."""
        ...
