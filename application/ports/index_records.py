"""Port: the values the search index's port speaks in (files, progress, issues, sync records,
cache keys) and its errors (the error tree: application/ports/index_store.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from memlane.domain.chunks import ContentHash
from memlane.domain.index_meta import IndexMeta
from memlane.domain.sources import Source


class StoreError(Exception):
    """Base for every failure an IndexStore may raise."""


class DimensionMismatch(StoreError):
    """A vector's length differs from the index's; nothing was changed."""


class StoreReadOnly(StoreError):
    """The store cannot be written."""


class StoreCorrupt(StoreError):
    """The database is damaged or not a memlane index."""


def caused_by(exc: BaseException, kind: type[StoreError]) -> bool:
    """Whether `exc`, or an error it was raised from, is a `kind` (the event log, which lives in
    the same file, wraps store errors in its own)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, kind):
            return True
        seen = seen.__cause__
    return False


@dataclass(frozen=True, slots=True)
class IndexedFile:
    """The `files` row of one indexed file (primary key: source + path)."""

    source: Source
    path: str
    hash: ContentHash
    mtime: float
    size: int


@dataclass(frozen=True, slots=True)
class SourceCount:
    """How many files and chunks one source has in the index."""

    source: Source
    files: int
    chunks: int


@dataclass(frozen=True, slots=True)
class VectorProgress:
    """How many chunks have a vector of one model, of all the chunks in the index."""

    done: int
    total: int

    @property
    def missing(self) -> int:
        """Chunks still waiting for a vector of the model (the backfill's work)."""
        return self.total - self.done

    @property
    def complete(self) -> bool:
        """Whether every chunk has its vector (true for an empty index)."""
        return self.done >= self.total

    def ratio(self) -> str:
        """`12,345 / 100,000 (12 %)`; the percentage rounds down, so 100 % means done."""
        percent = 100 * self.done // self.total if self.total else 100
        return f"{self.done:,} / {self.total:,} ({percent} %)"

    def text(self) -> str:
        """`vectors 12,345 / 100,000 (12 %)`, the words of search warnings."""
        return f"vectors {self.ratio()}"


@dataclass(frozen=True, slots=True)
class FirstIndexState:
    """A first index being written into the live store file by file (no complete index yet).

    With no index there is nothing to protect, so the first index commits each file's rows in
    its own transaction and searches answer from the files written so far; `set_meta` at the end
    marks the index complete. `running` says whether its writer still runs (None: the store
    cannot tell, a shared server where the sync lock keeps a second sync out anyway); `here`,
    whether that writer is this process. A record whose writer is gone is an interrupted first
    index: the next sync completes it, keeping the files already written.
    """

    meta: IndexMeta  # what it builds: a resumed first index must build the same shape
    files_total: int  # files found to index when it started
    files_done: int  # files in the index so far
    running: bool | None
    here: bool

    @property
    def running_elsewhere(self) -> bool:
        """Whether another process writes it now: a sync here would do the same work twice."""
        return self.running is True and not self.here

    def text(self) -> str:
        """`indexing 5,000 / 14,285 files (35 %)`, the words of warnings and `status`."""
        done = min(self.files_done, self.files_total)
        percent = 100 * done // self.files_total if self.files_total else 100
        return f"indexing {done:,} / {self.files_total:,} files ({percent} %)"


@dataclass(frozen=True, slots=True)
class RecordedIssue:
    """A per-file problem as kept with the index, so that a new process still reports it.

    `key` is a source, or another area (`scan:<source>` for listing problems, `index`,
    `provider`). `mtime` / `size` name the version of the file the problem was found in: that
    version is not read again until it changes (None when the problem is not about one file).
    """

    key: str
    path: str
    reason: str
    mtime: float | None = None
    size: int | None = None


@dataclass(frozen=True, slots=True)
class VectorIndexState:
    """What the vector leg answers from, for `status`: the engine, how many vectors its index
    file covers (None when it has no file), and its state in words (built, stale and why,
    rebuilt and why, exact below the size that gets a file...)."""

    engine: str
    vectors: int | None
    state: str


@dataclass(frozen=True, slots=True)
class SyncRecord:
    """The last sync that changed the index, as recorded with it (`status` in a new process)."""

    finished_at: str  # ISO 8601, UTC
    reason: str
    full_reindex: bool
    files_indexed: int
    files_removed: int
    # Transcripts the last sync held back below the sync.sessions growth thresholds (kept up
    # to date by every sync, also one that changed nothing else).
    files_held_back: int = 0


@dataclass(frozen=True, slots=True)
class CacheKey:
    """Partition of the embedding cache: vectors are only reused for the same model config."""

    provider: str
    model: str
    provider_key: str
