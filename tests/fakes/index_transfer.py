"""An IndexTransfer in memory: `stores` maps an agent to its rows (a count of chunks here)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from memlane.application.ports.index_transfer import (
    CacheRecord,
    ChunkRecord,
    IndexSnapshot,
    TransferCounts,
    TransferTargetNotEmpty,
)


@dataclass
class FakeIndexTransfer:
    """One agent of `stores`. `fail_load` is raised by `load` (after its check, as a real one's
    transaction rolls back: nothing written); `fail_remove` by `remove`; `cached`: what the
    agent's embedding cache holds (a cache alone is no index: `load` writes beside it)."""

    stores: dict[str, int]
    agent: str
    fail_load: BaseException | None = None
    fail_remove: BaseException | None = None
    source_rows: int = 2
    cached: int = 0  # embedding cache rows of the agent, beside its index or none
    closed: bool = field(default=False)

    def counts(self) -> TransferCounts:
        n = self.stores.get(self.agent, 0)
        return TransferCounts(files=n, chunks=n, vectors=0, cache=self.cached, events=0,
                              last_position=0, tracking=0)  # fmt: skip

    def snapshot(self) -> IndexSnapshot:
        return IndexSnapshot(meta=None, files=[], events=[], last_position=0, tracking={})

    def chunks(self) -> Iterator[ChunkRecord]:
        return iter(())

    def cache(self) -> Iterator[CacheRecord]:
        return iter(())

    def load(
        self, snapshot: IndexSnapshot, chunks: Iterator[ChunkRecord], cache: Iterator[CacheRecord]
    ) -> None:
        del snapshot, chunks, cache
        if self.stores.get(self.agent):
            raise TransferTargetNotEmpty(f"{self.agent} already has an index")
        if self.fail_load is not None:
            raise self.fail_load
        self.stores[self.agent] = self.source_rows

    def remove(self) -> None:
        if self.fail_remove is not None:
            raise self.fail_remove
        self.stores.pop(self.agent, None)

    def how_to_remove(self) -> str:
        return f"forget {self.agent}"

    def close(self) -> None:
        self.closed = True
